/**
 * The slice of jstat 1.9.6 (a dependency-free UMD bundle without its own types) that src/core/stats uses:
 * Student's t distribution.
 */
declare module 'jstat' {
  interface StudentT {
    /** P(T ≤ x) for T ~ t(dof). */
    cdf(x: number, dof: number): number;
    /** The p-quantile of t(dof). */
    inv(p: number, dof: number): number;
  }
  const jStat: { studentt: StudentT };
  export default jStat;
}
