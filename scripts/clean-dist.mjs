// Before packing: an empty dist/, so that a file removed from src/ cannot ship from an old build.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
