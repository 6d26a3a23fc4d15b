export function buildPanel(outDir: string): Promise<void>;
