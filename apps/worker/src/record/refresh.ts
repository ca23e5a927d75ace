// When the recorder reads its live source again: about once per segment, just after the next one
// is due, so a new segment is seen soon after it is listed (the lag goal: p99 ≤ one target duration)
// without reading twice per segment. Pure, so its cadence is tested by simulation, not by clock.
//
// RFC 8216 6.3.4's rule (a whole target duration after a changed playlist, half of one after an
// unchanged one) lets the lag ratchet: reads keep the phase of the first one, timers fire late, and
// a late segment moves the phase later for good, so the lag creeps up to a target duration. A fixed
// half-target poll keeps it low but reads every playlist twice. This keeps the phase instead: after
// a refresh that found the next segment, the wait is a segment's duration less a sixteenth, so each
// read comes a little earlier than the last, until one finds nothing (the segment is not out yet);
// the read half a segment later finds it, at most half a segment after it was listed. About one
// read in nine finds nothing: 1.1 reads per segment. When the phase is unknown (the first read, or a
// refresh that found several new segments: the recorder fell behind) the next read comes after half
// a segment, which finds it again.

/** Refresh bounds whatever the playlist claims: never faster than twice a second, never slower than 30 s. */
export const MIN_REFRESH_MS = 500;
export const MAX_REFRESH_MS = 30_000;
/** How much earlier than a segment's duration the read after a new segment comes (a share of it). */
export const PHASE_STEP = 1 / 16;

export class RefreshCadence {
  private first = true;

  /**
   * Milliseconds from the start of the read just made to the next one. `advanced`: how many new
   * segments that read listed; `segmentMs`: how long the newest listed segment lasts (bounded by
   * the target duration, which stands in when it is unknown).
   */
  next(advanced: number, segmentMs: number): number {
    // One new segment came out after the read before (which did not list it), and that read was at
    // most half a segment earlier or itself on the phase: the next one is due a segment later.
    // Nothing new, several at once (the recorder fell behind), or the first read (when the newest
    // came out is not known): half a segment, after which a new segment is at most that late.
    const onPhase = advanced === 1 && !this.first;
    this.first = false;
    const wait = onPhase ? segmentMs * (1 - PHASE_STEP) : segmentMs / 2;
    return Math.min(MAX_REFRESH_MS, Math.max(MIN_REFRESH_MS, wait));
  }
}
