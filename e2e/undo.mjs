// What the undo tests of the faces (undo-acp, undo-mcp) share: the run that
// makes a mess, the workspace it starts from, and a listing to compare.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { answer, toolReply } from "./lib.mjs";

// A run that writes kept.txt with text_editor, then makes out/made.txt and
// deletes gone.txt with a command. The request after the undo must not
// hold the run: were it there, the "leak" reply (listed first among the
// unused ones its text matches) would answer it.
export const undoReplies = [
  { match: "make the mess", content: toolReply("edit", "text_editor:write", { path: "kept.txt", content: "changed by the agent\n" }) },
  { match: "changed by the agent", content: toolReply("shell", "code_execution_tool", { runtime: "terminal", code: "mkdir -p out && echo new > out/made.txt && rm gone.txt && echo done-shell" }) },
  { match: "done-shell", content: answer("mess made") },
  { match: "done-shell", content: answer("LEAK: the undone run is still in the request") },
  { match: "after the undo", content: answer("fresh") },
];

/** Writes content at rel under dir, making its folders. */
export function put(dir, rel, content) {
  mkdirSync(dirname(join(dir, rel)), { recursive: true });
  writeFileSync(join(dir, rel), content);
}

/** The workspace before the run: the files it changes, ignored output, the user's .git. */
export function seed(ws) {
  put(ws, "kept.txt", "the user's text\n");
  put(ws, "gone.txt", "deleted by a command\n");
  put(ws, ".gitignore", "build/\n");
  put(ws, "build/out.bin", "ignored build output\n");
  put(ws, ".git/HEAD", "ref: refs/heads/main\n");
}

/** Every file and folder under dir with its content (a folder's is "/"). */
export function listing(dir, root = dir, out = {}) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const rel = relative(root, p);
    if (statSync(p).isDirectory()) {
      out[rel] = "/";
      listing(p, root, out);
    } else {
      out[rel] = readFileSync(p, "utf8");
    }
  }
  return out;
}
