/**
 * The files of a drop on the runs table: plain files as they are, and dropped folders walked through the
 * File and Directory Entries API (webkitGetAsEntry, which Chromium and Electron support) so a TensorBoard
 * folder can be dropped like it can be picked. Each file keeps its path inside the dropped folder.
 *
 * Also the files of a folder picked with showDirectoryPicker (Import folder…): walked folder by folder as a
 * drop is. Both walks list each folder's own entries and Chromium leaves symbolic links out of them, so a
 * run folder that a link points to (W&B's `wandb/latest-run`) comes once, under its own name. The folder
 * upload of `<input webkitdirectory>` does not: Chromium lists the tree in one recursive pass that follows
 * the link, marks its target as seen and then drops both, so that run folder never reaches the page.
 */
import type { Pick } from './importer.svelte';

/** Whether a drag carries files (and not, say, a text selection or a link). */
export function dragHasFiles(dt: DataTransfer | null): boolean {
  return !!dt && [...dt.types].includes('Files');
}

export async function filesFromDrop(dt: DataTransfer): Promise<Pick[]> {
  // The entries must be taken synchronously, during the drop event: the DataTransfer is emptied after it.
  const entries: FileSystemEntry[] = [];
  const loose: File[] = [];
  for (const item of [...dt.items]) {
    if (item.kind !== 'file') continue;
    const entry = item.webkitGetAsEntry?.() ?? null;
    if (entry) entries.push(entry);
    else {
      const f = item.getAsFile();
      if (f) loose.push(f);
    }
  }
  if (entries.length === 0 && loose.length === 0) return [...dt.files].map((file) => ({ file, path: '' }));
  const out: Pick[] = loose.map((file) => ({ file, path: '' }));
  for (const e of entries) await walk(e, out, e.isDirectory);
  return out;
}

async function walk(entry: FileSystemEntry, out: Pick[], inFolder: boolean): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    out.push({ file, path: inFolder ? entry.fullPath.replace(/^\//, '') : '' });
    return;
  }
  if (!entry.isDirectory) return;
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  // readEntries returns the children in batches (about 100 at a time in Chromium) until an empty batch.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    for (const child of batch) await walk(child, out, true);
  }
}

/**
 * What showDirectoryPicker answers, as far as the walk reads it (File System Access API; the DOM library this
 * project compiles against has the handles without their async iteration).
 */
export interface DirectoryHandle {
  readonly kind: 'directory';
  readonly name: string;
  values(): AsyncIterable<DirectoryHandle | FileHandle>;
}

export interface FileHandle {
  readonly kind: 'file';
  readonly name: string;
  getFile(): Promise<File>;
}

/**
 * Every file under a picked folder, each with its path as an `<input webkitdirectory>` pick gives it
 * (`<picked folder>/<sub>/<file>`), in each folder's listing order.
 */
export async function filesFromDirectory(root: DirectoryHandle): Promise<Pick[]> {
  const out: Pick[] = [];
  const visit = async (dir: DirectoryHandle, prefix: string): Promise<void> => {
    for await (const child of dir.values()) {
      const path = `${prefix}/${child.name}`;
      if (child.kind === 'file') out.push({ file: await child.getFile(), path });
      else await visit(child, path);
    }
  };
  await visit(root, root.name);
  return out;
}
