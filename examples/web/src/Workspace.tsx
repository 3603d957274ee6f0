import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from './api';

interface FileEntry {
  readonly name: string;
  readonly exists: boolean;
  readonly bytes?: number;
}
interface FileContent {
  readonly name: string;
  readonly exists: boolean;
  readonly content: string;
  readonly sha256: string | null;
}

/** Edit a workspace file with optimistic concurrency: a save with a stale hash shows both versions. */
export function WorkspacePage() {
  const [files, setFiles] = useState<FileEntry[]>([]);
  const [open, setOpen] = useState<FileContent | undefined>();
  const [text, setText] = useState('');
  const [conflict, setConflict] = useState<FileContent | undefined>();
  const [message, setMessage] = useState<string | undefined>();

  useEffect(() => {
    api<{ files: FileEntry[] }>('v1/workspace/files').then((r) => setFiles(r.files), (e: unknown) => setMessage(e instanceof Error ? e.message : String(e)));
  }, []);
  const load = useCallback(async (name: string) => {
    const file = await api<FileContent>(`v1/workspace/files/${encodeURIComponent(name)}`);
    setOpen(file);
    setText(file.content ?? '');
    setConflict(undefined);
    setMessage(undefined);
  }, []);

  const save = async (expectedSha256: string | null) => {
    if (!open) return;
    try {
      const r = await api<{ sha256: string }>(`v1/workspace/files/${encodeURIComponent(open.name)}`, { method: 'PUT', body: { content: text, expectedSha256 } });
      setOpen({ ...open, exists: true, content: text, sha256: r.sha256 });
      setConflict(undefined);
      setMessage(`Saved ${open.name}.`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) {
        // Someone (another tab, the agent) changed it: show theirs beside yours, nothing was written.
        setConflict(await api<FileContent>(`v1/workspace/files/${encodeURIComponent(open.name)}`));
        setMessage(e.message);
      } else setMessage(e instanceof Error ? e.message : String(e));
    }
  };

  return (
    <section className="workspace">
      <h1>Workspace</h1>
      <div className="files">
        {files.map((f) => (
          <button key={f.name} className={open?.name === f.name ? 'active' : 'secondary'} onClick={() => void load(f.name)}>
            {f.name}
            {f.exists ? '' : ' (new)'}
          </button>
        ))}
      </div>
      {message ? <div className={conflict ? 'error' : 'notice'} data-testid="workspace-message">{message}</div> : null}
      {open ? (
        <>
          <textarea aria-label="file content" value={text} onChange={(e) => setText(e.target.value)} rows={18} />
          {conflict ? (
            <div className="merge" data-testid="merge">
              <div>
                <h3>On disk now</h3>
                <pre>{conflict.content}</pre>
              </div>
              <div>
                <h3>Yours</h3>
                <pre>{text}</pre>
              </div>
              <div className="row">
                <button onClick={() => void save(conflict.sha256)}>Keep mine</button>
                <button className="secondary" onClick={() => { setText(conflict.content); setOpen(conflict); setConflict(undefined); setMessage(undefined); }}>
                  Take theirs
                </button>
              </div>
            </div>
          ) : (
            <button onClick={() => void save(open.sha256)}>Save</button>
          )}
        </>
      ) : (
        <p className="muted">Pick a file: SOUL.md is the agent's voice, USER.md what it knows about you, MEMORY.md its notes.</p>
      )}
    </section>
  );
}
