/** The token form, shown when the server refused the token (or asked for one). */
import { byId } from './dom.js';
import { storedToken, storeToken } from './token.js';

export class TokenPrompt {
  private readonly form = byId<HTMLFormElement>('token-form');
  private readonly input = byId<HTMLInputElement>('token-input');
  private readonly reason = byId('token-reason');
  private readonly signOut = byId<HTMLButtonElement>('sign-out');

  constructor(private readonly changed: () => void) {
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      storeToken(this.input.value.trim() || undefined);
      this.input.value = '';
      this.hide();
      this.changed();
    });
    this.signOut.addEventListener('click', () => {
      storeToken(undefined);
      this.changed();
    });
    this.update();
  }

  show(reason: string): void {
    this.reason.textContent = reason;
    this.form.hidden = false;
    document.body.dataset.prompt = 'token';
    this.input.focus();
  }

  hide(): void {
    this.form.hidden = true;
    delete document.body.dataset.prompt;
    this.update();
  }

  update(): void {
    this.signOut.hidden = storedToken() === undefined;
  }
}
