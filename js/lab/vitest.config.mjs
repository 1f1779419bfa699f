import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'jsdom',
    include: ['test/**/*.test.ts'],
    // Bounds only, never a speed check: a busy 2-core machine (CI building llama.cpp
    // beside) takes far beyond vitest's 5 s for a jsdom test or its 10 s for a hook.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One worker thread for all files: vitest gives a worker 60 s to start, which a
    // forked worker per file missed on a loaded 2-core machine (a failed run, not a test).
    pool: 'threads',
    maxWorkers: 1
  }
});
