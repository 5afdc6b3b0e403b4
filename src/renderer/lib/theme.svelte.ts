/** Light/dark following the system (prefers-color-scheme); charts read `dark` to pick their colours. */
export class Theme {
  dark = $state(false);

  constructor() {
    const mq = window.matchMedia('(prefers-color-scheme: dark)');
    this.dark = mq.matches;
    mq.addEventListener('change', (e) => {
      this.dark = e.matches;
    });
  }
}
