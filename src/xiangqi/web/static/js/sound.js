// Short synthesized sounds (Web Audio; no sound files). A move sounds like a wooden piece set down on a
// wooden board: a short burst of noise (the click of the contact) shaped by band-pass filters that ring
// like the wood (a body resonance of a few hundred hertz and a brighter one of the piece's edge), with
// a low thump under it. A capture is two knocks, harder and lower: the piece strikes the one it takes.
// The game's end is a short chime. A check is also spoken (将军 / "Check") when speech is available.

let ctx = null;
let muted = false;

export function setMuted(value) {
  muted = Boolean(value);
}

export function isMuted() {
  return muted;
}

/** One knock of wood on wood: [delay s, loudness 0-1, body resonance Hz, edge resonance Hz, ring s]. */
const KNOCKS = {
  move: [[0, 0.8, 620, 1900, 0.05]],
  capture: [[0, 1, 430, 1500, 0.07], [0.055, 0.75, 560, 1800, 0.06]],
};
KNOCKS.check = KNOCKS.move;

const CHIME = [[523, 0.15], [659, 0.15], [784, 0.3]];

let noiseCache = null;
/** 80 ms of white noise (the same every time: a fixed-seed generator), for ``context``'s rate. */
function noise(context) {
  if (noiseCache && noiseCache.sampleRate === context.sampleRate) return noiseCache;
  const n = Math.round(context.sampleRate * 0.08);
  const buf = context.createBuffer(1, n, context.sampleRate);
  const data = buf.getChannelData(0);
  let seed = 12345;
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    data[i] = seed / 1073741824 - 1;
  }
  noiseCache = buf;
  return buf;
}

function knock(context, out, t0, [delay, level, body, edge, ring]) {
  const t = t0 + delay;
  const src = context.createBufferSource();
  src.buffer = noise(context);
  // the contact: a click a few milliseconds long
  const hit = context.createGain();
  hit.gain.setValueAtTime(0, t);
  hit.gain.linearRampToValueAtTime(level, t + 0.001);
  hit.gain.exponentialRampToValueAtTime(0.001, t + 0.012);
  src.connect(hit);
  // the wood ringing: narrow band-pass filters excited by the click
  for (const [freq, q, gain] of [[body, 9, 2.2], [edge, 5, 0.8]]) {
    const bp = context.createBiquadFilter();
    bp.type = "bandpass";
    bp.frequency.value = freq;
    bp.Q.value = q;
    const g = context.createGain();
    g.gain.setValueAtTime(gain, t);
    g.gain.exponentialRampToValueAtTime(0.001, t + ring);
    hit.connect(bp).connect(g).connect(out);
  }
  // a little of the raw click, high-passed, for the attack
  const hp = context.createBiquadFilter();
  hp.type = "highpass";
  hp.frequency.value = 2500;
  const g = context.createGain();
  g.gain.value = 0.25;
  hit.connect(hp).connect(g).connect(out);
  // the board's low thump
  const osc = context.createOscillator();
  osc.type = "sine";
  osc.frequency.setValueAtTime(body / 3, t);
  osc.frequency.exponentialRampToValueAtTime(body / 5, t + 0.04);
  const thump = context.createGain();
  thump.gain.setValueAtTime(0.35 * level, t);
  thump.gain.exponentialRampToValueAtTime(0.001, t + 0.045);
  osc.connect(thump).connect(out);
  src.start(t);
  src.stop(t + 0.08);
  osc.start(t);
  osc.stop(t + 0.05);
}

/** Schedule sound ``name`` ("move", "capture", "check", "end") on ``context`` (an AudioContext or an
 *  OfflineAudioContext) at ``t0`` seconds. Returns its length in seconds. */
export function schedule(context, name, t0 = context.currentTime) {
  const out = context.createGain();
  out.gain.value = 0.5;
  out.connect(context.destination);
  if (name === "end") {
    let t = t0;
    for (const [freq, dur] of CHIME) {
      const osc = context.createOscillator();
      const gain = context.createGain();
      osc.type = "sine";
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.3, t);
      gain.gain.exponentialRampToValueAtTime(0.001, t + dur);
      osc.connect(gain).connect(out);
      osc.start(t);
      osc.stop(t + dur);
      t += dur * 0.9;
    }
    return t - t0;
  }
  const knocks = KNOCKS[name] || [];
  for (const k of knocks) knock(context, out, t0, k);
  return knocks.reduce((end, [delay, , , , ring]) => Math.max(end, delay + ring), 0);
}

/** Play one of "move", "capture", "check", "end" unless muted. Records it on document.body for tests. */
export function play(name) {
  document.body.dataset.lastSound = name;
  if (muted) return;
  try {
    ctx = ctx || new (window.AudioContext || window.webkitAudioContext)();
    if (ctx.state === "suspended") ctx.resume();
    schedule(ctx, name);
  } catch {
    // No audio device: sound is optional.
  }
}

/** Say ``text`` in ``lang`` (zh-CN, en-US) with the browser's speech synthesis, unless muted or the
 *  browser has none. Records it on document.body for tests. */
export function say(text, lang) {
  if (muted) return;
  document.body.dataset.lastSpoken = text;
  try {
    if (!window.speechSynthesis || !window.SpeechSynthesisUtterance) return;
    const u = new SpeechSynthesisUtterance(text);
    u.lang = lang;
    u.rate = 1.1;
    window.speechSynthesis.cancel();
    window.speechSynthesis.speak(u);
  } catch {
    // Speech is optional.
  }
}
