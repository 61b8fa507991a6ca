// The page's one way to reach its server: every fetch and WebSocket carries the session token.
// The server refuses a state change or a WebSocket without it (xiangqi/web/security.py). The
// token comes in <meta name="xiangqi-token"> of the page and changes at every start of the
// server; when a request is refused for an old token, the page reads the new one from "/".

let token = document.querySelector('meta[name="xiangqi-token"]')?.content || "";

/** Read the current token from a fresh copy of the page; true when it changed. */
async function refreshToken() {
  const res = await fetch("/", { cache: "no-store" });
  if (!res.ok) return false;
  const doc = new DOMParser().parseFromString(await res.text(), "text/html");
  const fresh = doc.querySelector('meta[name="xiangqi-token"]')?.content || "";
  if (!fresh || fresh === token) return false;
  token = fresh;
  return true;
}

/** fetch() with the token header; a request refused for an old token is sent once more with the new one. */
export async function request(path, options = {}) {
  const send = () => {
    const headers = new Headers(options.headers || {});
    headers.set("X-Xiangqi-Token", token);
    return fetch(path, { ...options, headers });
  };
  const res = await send();
  if (res.status !== 403) return res;
  // The middleware refused it before any handler ran; retry only if the server has a new token.
  try { if (await refreshToken()) return await send(); } catch { /* the server went away */ }
  return res;
}

/** A WebSocket to ``path`` on this server with the token as a query parameter (browsers cannot set headers). */
export function socket(path) {
  const url = new URL(path, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("token", token);
  const ws = new WebSocket(url);
  let opened = false;
  ws.addEventListener("open", () => { opened = true; });
  // A refused handshake or a lost server: the server may have restarted with a new token. Fetch
  // it now, so that the page's reconnect (a moment later) carries the right one.
  ws.addEventListener("close", (ev) => {
    if (!opened || !ev.wasClean) refreshToken().catch(() => {});
  });
  return ws;
}
