/**
 * The sessions list as a drawer on narrow screens (docs/panel.md): the top bar's button opens and
 * closes it, Escape and opening a session close it. On wider screens the button is not shown and
 * the list is always beside the session (panel.css).
 */
import { byId } from './dom.js';

export class Drawer {
  private readonly button = byId<HTMLButtonElement>('sessions-toggle');

  constructor() {
    this.button.addEventListener('click', () => this.set(document.body.dataset.drawer !== 'open'));
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && document.body.dataset.drawer === 'open') this.set(false);
    });
  }

  set(open: boolean): void {
    document.body.dataset.drawer = open ? 'open' : 'closed';
    this.button.setAttribute('aria-expanded', String(open));
  }
}
