/**
 * The connection state, always visible in the header: `#connection[data-state]` is one of
 * connecting, connected, reconnecting, unauthorized, forbidden, closed; the text says what happens next.
 */
import { byId } from './dom.js';

export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'unauthorized' | 'forbidden' | 'closed';

export class ConnectionBadge {
  private readonly node = byId('connection');

  set(state: ConnectionState, text: string, closeCode?: number): void {
    this.node.dataset.state = state;
    if (closeCode === undefined) delete this.node.dataset.closeCode;
    else this.node.dataset.closeCode = String(closeCode);
    this.node.textContent = text;
    this.node.title = text;
  }

  stateIs(...states: ConnectionState[]): boolean {
    return states.includes(this.node.dataset.state as ConnectionState);
  }

  /** The text for a reconnect: its attempt, its delay, and why the last connection ended. */
  reconnecting(attempt: number, delayMs: number, lastClose: { code: number; reason: string } | undefined): void {
    const why =
      lastClose?.code === 4008 ? 'Fell behind (4008): resuming' : lastClose?.code === 1001 ? 'Server restarting: resuming' : 'Connection lost: reconnecting';
    this.set('reconnecting', `${why} in ${(delayMs / 1000).toFixed(1)} s (attempt ${attempt})`, lastClose?.code);
  }
}
