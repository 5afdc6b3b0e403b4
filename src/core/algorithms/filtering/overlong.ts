/**
 * DAPO overlong-response shaping (spec §1.4, used with `adv_estimator = dapo`): with buffer
 * L_b = ⌊maxResponseTokens · bufferFrac⌋ (reference: ⌊512/5⌋ = 102), the row score gets
 *   min(−(|y| − (max − L_b)) / L_b · penaltyFactor, 0)
 * i.e. 0 up to max − L_b tokens, then a linear penalty reaching −penaltyFactor at max length.
 */
export function overlongPenalty(responseLength: number, maxResponseTokens: number, bufferFrac: number, penaltyFactor: number): number {
  const buffer = Math.floor(maxResponseTokens * bufferFrac);
  if (buffer <= 0) return 0;
  const expected = maxResponseTokens - buffer;
  const shaped = (-(responseLength - expected) / buffer) * penaltyFactor;
  return shaped < 0 ? shaped : 0;
}
