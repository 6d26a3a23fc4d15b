/** The configuration tests start from: the defaults, a memory store, quiet logs. */
import { loadConfig, type Config } from '../../src/config/config.js';

export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ HOROLOGIUM_STORE: 'memory:', LOG_LEVEL: 'silent' }), ...overrides };
}
