// What the functions' bundles put in place of zod's table of every locale: English only. zod
// exports the whole table from its namespace (`z.locales`), so a bundler cannot leave the other
// languages out by itself; the gateway's messages are English and nothing picks another locale.
export { default as en } from 'zod/v4/locales/en.js';
