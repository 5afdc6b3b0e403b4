/** The app itself (Svelte runtime, shell and views), loaded by the page's small entry module (main.ts). */
import { mount } from 'svelte';
import './app.css';
import type { ArlArenaApi } from '../../shared/api';
import App from './App.svelte';

export function start(target: HTMLElement, api: ArlArenaApi): void {
  mount(App, { target, props: { api } });
}
