/* Student's t distribution, shared by the pages that print t-based numbers (custom.js: your own benchmark;
   pairs.js: any two models, the dataset and compare pages). The tail is the regularised incomplete beta function
   (Lentz's continued fraction, log Γ from Stirling's series), the quantile Newton's steps refined by bisection to
   the last bit: within 1e-13 (relative) of scipy.stats.t.sf and t.isf up to 1,000 degrees of freedom, 1e-11 at
   100,000. window.irboardStudentT = { sf, upperQuantile, cdf }. */
(function () {
  "use strict";

  /* log Γ(x) for x > 0: Stirling's series (eight terms, error below 1e-17 beyond 10), smaller x shifted above 10
     by Γ(x) = Γ(x + n) / (x (x + 1) ... (x + n - 1)). */
  var STIRLING = [1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400];
  function stirlingTail(x) {  /* log Γ(x) - ((x - 1/2) log x - x + log(2π) / 2), x > 10 */
    var x2 = x * x, sum = 0;
    for (var i = STIRLING.length - 1; i >= 0; i -= 1) { sum = sum / x2 + STIRLING[i]; }
    return sum / x;
  }
  function logGamma(x) {
    if (x < 0.5) { return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x); }
    var product = 1;
    for (; x <= 10; x += 1) { product *= x; }
    return (x - 0.5) * Math.log(x) - x + 0.9189385332046728 + stirlingTail(x) - Math.log(product);
  }
  /* log B(a, b); for two large arguments the Stirling terms are combined before they cancel. */
  function logBeta(a, b) {
    if (a > 10 && b > 10) {
      var s = a + b;
      return 0.5 * Math.log(2 * Math.PI) + (a - 0.5) * Math.log(a / s) + (b - 0.5) * Math.log(b / s) -
        0.5 * Math.log(s) + stirlingTail(a) + stirlingTail(b) - stirlingTail(s);
    }
    if (a > 10 || b > 10) {  /* log Γ(small) + log Γ(big) - log Γ(big + small), the big ones' difference first */
      var big = Math.max(a, b), small = Math.min(a, b), both = big + small;
      var difference = (big - 0.5) * Math.log(big / both) - small * Math.log(both) + small +
        stirlingTail(big) - stirlingTail(both);
      return logGamma(small) + difference;
    }
    return logGamma(a) + logGamma(b) - logGamma(a + b);
  }
  /* Lentz's continued fraction of the incomplete beta function. */
  function betaFraction(a, b, x) {
    var tiny = 1e-300, c = 1, d = 1 - (a + b) * x / (a + 1);
    if (Math.abs(d) < tiny) { d = tiny; }
    d = 1 / d;
    var h = d;
    for (var m = 1; m < 100000; m += 1) {
      var m2 = 2 * m, aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
      d = 1 + aa * d; if (Math.abs(d) < tiny) { d = tiny; }
      c = 1 + aa / c; if (Math.abs(c) < tiny) { c = tiny; }
      d = 1 / d; h *= d * c;
      aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
      d = 1 + aa * d; if (Math.abs(d) < tiny) { d = tiny; }
      c = 1 + aa / c; if (Math.abs(c) < tiny) { c = tiny; }
      d = 1 / d;
      var step = d * c;
      h *= step;
      if (Math.abs(step - 1) < 2e-16) { break; }
    }
    return h;
  }
  /* I_x(a, b) given x and y = 1 - x, each computed without cancellation by the caller. */
  function incompleteBeta(a, b, x, y) {
    if (x <= 0) { return 0; }
    if (y <= 0) { return 1; }
    var front = Math.exp(a * Math.log(x) + b * Math.log(y) - logBeta(a, b));
    if (x < (a + 1) / (a + b + 2)) { return front * betaFraction(a, b, x) / a; }
    return 1 - front * betaFraction(b, a, y) / b;
  }
  /* P(T > t), Student's t with df degrees of freedom (scipy.stats.t.sf). */
  function tSf(t, df) {
    if (t === Infinity) { return 0; }
    if (t === -Infinity) { return 1; }
    var t2 = t * t, x = df / (df + t2), y = t2 / (df + t2);
    var tail = 0.5 * incompleteBeta(df / 2, 0.5, x, y);
    return t > 0 ? tail : 1 - tail;
  }
  /* The t with P(T > t) = p, 0 < p < 1/2 (scipy.stats.t.ppf(1 - p)): Newton's steps on the tail from the
     normal quantile's neighbourhood, then bisection of the last interval to the last bit. */
  function tDensity(t, df) {
    return Math.exp(-logBeta(df / 2, 0.5) - 0.5 * Math.log(df) - (df + 1) / 2 * Math.log1p(t * t / df));
  }
  var quantiles = {};
  function tUpperQuantile(p, df) {
    var key = p + "/" + df;
    if (quantiles[key] !== undefined) { return quantiles[key]; }
    var t = 2, i;
    for (i = 0; i < 100; i += 1) {
      var step = (tSf(t, df) - p) / tDensity(t, df), next = t + step;
      if (next <= 0) { next = t / 2; }
      if (Math.abs(next - t) <= 1e-15 * Math.abs(next)) { t = next; break; }
      t = next;
    }
    var found = tSf(t, df);
    if (!(found <= 2 * p && found >= p / 2)) {  /* far in a heavy tail, where Newton's steps only double t */
      var below = 1, above = 2;
      for (i = 0; i < 2100 && tSf(above, df) > p; i += 1) { below = above; above *= 2; }
      for (i = 0; i < 200; i += 1) {  /* halve the bracket's ratio */
        var mid = Math.sqrt(below) * Math.sqrt(above);
        if (mid <= below || mid >= above) { break; }
        if (tSf(mid, df) > p) { below = mid; } else { above = mid; }
      }
      t = above;
    }
    var low = t, high = t;  /* a bracket around it, a few ulps wide, then halved to the last bit */
    for (i = 0; i < 60 && tSf(low, df) <= p; i += 1) { low -= Math.abs(low) * 1e-15 * Math.pow(2, i); }
    for (i = 0; i < 60 && tSf(high, df) > p; i += 1) { high += Math.abs(high) * 1e-15 * Math.pow(2, i); }
    for (i = 0; i < 200; i += 1) {
      var middle = (low + high) / 2;
      if (middle <= low || middle >= high) { break; }
      if (tSf(middle, df) > p) { low = middle; } else { high = middle; }
    }
    quantiles[key] = (low + high) / 2;
    return quantiles[key];
  }

  /* P(T <= t) (scipy.stats.t.cdf). */
  function tCdf(t, df) { return tSf(-t, df); }

  window.irboardStudentT = { sf: tSf, upperQuantile: tUpperQuantile, cdf: tCdf };
}());
