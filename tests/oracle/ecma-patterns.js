// Rewrites ecma-patterns.json's `ecma` column with what JavaScript's own RegExp (ECMA-262, the
// `u` flag, as JSON Schema specifies patterns) says: `node ecma-patterns.js`.
const fs = require('fs');
const path = `${__dirname}/ecma-patterns.json`;
const cases = JSON.parse(fs.readFileSync(path, 'utf8'));
for (const c of cases) c.ecma = new RegExp(c.pattern, 'u').test(c.text);
fs.writeFileSync(path, JSON.stringify(cases, null, 1) + '\n');
