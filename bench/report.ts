// What the benchmark prints: each section as it completes, then one summary row per figure of
// the performance table (bench/README.md), with its target and a mark.

export type Mark = 'pass' | 'OVER' | 'info' | 'not measured';

export interface Row {
  readonly what: string;
  readonly measured: string;
  readonly target: string;
  readonly mark: Mark;
}

export const within = (ok: boolean): Mark => (ok ? 'pass' : 'OVER');

const write = (text: string): void => {
  process.stdout.write(`${text}\n`);
};

export const heading = (title: string): void => {
  write(`\n== ${title}`);
};

export const line = (text: string): void => {
  write(`   ${text}`);
};

/** Aligned columns, first column left-aligned and the others too (figures carry their units). */
export const table = (rows: readonly (readonly string[])[], indent = '   '): void => {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, cell.length);
    });
  }
  for (const row of rows) {
    write(
      `${indent}${row
        .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
        .join('  ')}`.trimEnd(),
    );
  }
};

export const summary = (rows: readonly Row[]): void => {
  heading('Summary (against the performance targets)');
  table(
    [['what', 'measured', 'target', ''], ...rows.map((row) => [row.what, row.measured, row.target, row.mark])],
    '   ',
  );
};
