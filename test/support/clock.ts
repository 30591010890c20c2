// A clock tests move by hand.
import type { Clock } from '../../shared/clock.js';

export class ManualClock implements Clock {
  constructor(private time = Date.parse('2026-11-29T12:00:00.000Z')) {}

  now(): number {
    return this.time;
  }

  advance(ms: number): void {
    this.time += ms;
  }
}
