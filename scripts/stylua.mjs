// StyLua over lua/ and plugin/ with the repo's .stylua.toml, through the npm package
// @johnnymorganz/stylua (StyLua compiled to WebAssembly: no binary to download).
// `node scripts/stylua.mjs --check` lists the files that are not formatted and exits 1;
// without --check it rewrites them. Generated files (first line "-- Generated") are skipped.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as stylua from '@johnnymorganz/stylua';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const DIRS = ['lua', 'plugin'];
// The .stylua.toml keys this script understands, by the value set they take.
const ENUMS = {
  line_endings: stylua.LineEndings,
  indent_type: stylua.IndentType,
  quote_style: stylua.QuoteStyle,
  call_parentheses: stylua.CallParenType,
  collapse_simple_statement: stylua.CollapseSimpleStatement,
  space_after_function_names: stylua.SpaceAfterFunctionNames,
  block_newline_gaps: stylua.BlockNewlineGaps,
  syntax: stylua.LuaVersion,
};
const NUMBERS = new Set(['column_width', 'indent_width']);

function config() {
  const settings = stylua.Config.new();
  const text = readFileSync(join(root, '.stylua.toml'), 'utf8');
  for (const [number, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    const match = line.match(/^(\w+)\s*=\s*(?:"([^"]*)"|(\d+))$/);
    const key = match && match[1];
    if (key in ENUMS && match[2] !== undefined && match[2] in ENUMS[key]) {
      settings[key] = ENUMS[key][match[2]];
    } else if (NUMBERS.has(key) && match[3] !== undefined) {
      settings[key] = Number(match[3]);
    } else {
      throw new Error(`.stylua.toml:${number + 1}: "${raw}" is not a setting this script knows (scripts/stylua.mjs)`);
    }
  }
  return settings;
}

function* luaFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* luaFiles(path);
    else if (entry.name.endsWith('.lua')) yield path;
  }
}

const check = process.argv.includes('--check');
const unformatted = [];
for (const dir of DIRS) {
  for (const path of luaFiles(join(root, dir))) {
    const text = readFileSync(path, 'utf8');
    if (text.startsWith('-- Generated')) continue;
    // A Config per call: formatCode takes it over (it is moved into the WebAssembly side).
    const formatted = stylua.formatCode(text, config(), undefined, stylua.OutputVerification.Full);
    if (formatted === text) continue;
    unformatted.push(relative(root, path));
    if (!check) writeFileSync(path, formatted);
  }
}
if (check && unformatted.length) {
  console.error(`stylua: not formatted (run \`node scripts/stylua.mjs\`): ${unformatted.join(', ')}`);
  process.exit(1);
}
if (!check && unformatted.length) console.log(`stylua: formatted ${unformatted.join(', ')}`);
