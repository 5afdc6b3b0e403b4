/**
 * The slice of jstat 1.9.6 (a dependency-free UMD bundle without its own types) that src/core/stats uses:
 * Student's t, beta (Clopper–Pearson bounds) and chi-square (log-rank p-value) distributions.
 */
declare module 'jstat' {
  interface StudentT {
    /** P(T ≤ x) for T ~ t(dof). */
    cdf(x: number, dof: number): number;
    /** The p-quantile of t(dof). */
    inv(p: number, dof: number): number;
  }
  interface Beta {
    /** The p-quantile of Beta(a, b). */
    inv(p: number, a: number, b: number): number;
  }
  interface ChiSquare {
    /** P(X ≤ x) for X ~ χ²(dof). */
    cdf(x: number, dof: number): number;
  }
  const jStat: { studentt: StudentT; beta: Beta; chisquare: ChiSquare };
  export default jStat;
}
