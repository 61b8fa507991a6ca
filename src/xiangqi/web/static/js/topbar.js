// The top bar's 更多 (more) menu on a phone-sized screen. The page has more actions than fit a
// 390 px wide bar: css/app.css keeps the first few in the bar and shows the rest (#more-menu) as
// a sheet under it while the 更多 button is pressed. On a wider screen the menu is laid out as
// part of the bar (display: contents) and the button is hidden, so this code only matters there.

/** Wire the 更多 button ``toggle`` to the menu ``menu`` (both elements of the top bar).
 *  The menu opens and closes on the button; it closes after one of its actions is tapped, on a
 *  tap anywhere outside the bar, and on Escape (the focus returns to the button). The open state
 *  is the button's aria-expanded and the menu's ``open`` class. Returns ``{ open, close }``. */
export function createMoreMenu(toggle, menu) {
  const isOpen = () => menu.classList.contains("open");

  function setOpen(on) {
    menu.classList.toggle("open", on);
    toggle.setAttribute("aria-expanded", on ? "true" : "false");
  }

  toggle.addEventListener("click", () => setOpen(!isOpen()));
  // an action's own handler runs first (on the button), then this one closes the sheet
  menu.addEventListener("click", (ev) => { if (ev.target.closest("button")) setOpen(false); });
  document.addEventListener("pointerdown", (ev) => {
    if (isOpen() && !toggle.contains(ev.target) && !menu.contains(ev.target)) setOpen(false);
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && isOpen()) {
      setOpen(false);
      toggle.focus();
    }
  });
  return { open: () => setOpen(true), close: () => setOpen(false) };
}
