// The command palette, as the workbench tests drive it (test.mjs, starts.mjs).

/**
 * Runs the command titled title from page's command palette. Right after
 * load the palette can open before an extension's contributions are in, so
 * it tries in short rounds until hang ms have passed (which only stops a
 * hang; it decides nothing).
 */
export async function runCommand(page, title, hang = 60000) {
  const deadline = Date.now() + hang;
  for (;;) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill('>' + title);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    try { await row.waitFor({ state: 'visible', timeout: 5000 }); await page.keyboard.press('Enter'); return; }
    catch (e) { if (Date.now() > deadline) throw e; }
  }
}
