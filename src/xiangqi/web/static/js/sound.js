// Short synthesized sounds (Web Audio; no sound files): move, capture, check, game end.

let ctx = null;
let muted = false;

export function setMuted(value) {
  muted = Boolean(value);
}

export function isMuted() {
  return muted;
}

const TONES = {
  move: [[520, 0.05, "triangle"]],
  capture: [[300, 0.07, "square"], [220, 0.08, "square"]],
  check: [[880, 0.08, "sawtooth"], [660, 0.1, "sawtooth"]],
  end: [[523, 0.15, "sine"], [659, 0.15, "sine"], [784, 0.3, "sine"]],
};

/** Play one of "move", "capture", "check", "end" unless muted. Records it on document.body for tests. */
export function play(name) {
  document.body.dataset.lastSound = name;
  if (muted) return;
  try {
    ctx = ctx || new (window.AudioContext || window.webkitAudioContext)();
    let t0 = ctx.currentTime;
    for (const [freq, dur, type] of TONES[name] || []) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.type = type;
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.15, t0);
      gain.gain.exponentialRampToValueAtTime(0.001, t0 + dur);
      osc.connect(gain).connect(ctx.destination);
      osc.start(t0);
      osc.stop(t0 + dur);
      t0 += dur * 0.9;
    }
  } catch {
    // No audio device: sound is optional.
  }
}
