/** Bundles the page into outDir (default ./dist); resolves to outDir. */
export function buildExample(outDir?: string): Promise<string>;
