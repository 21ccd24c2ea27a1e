/// Durations as people type them — `10s`, `1.5s`, `250ms`, `2m` — for `:wait` and, through
/// the transcript format, for `%wait` and an answer's `after` latency.
package enum DurationText {
    /// The longest duration one may name: a week is plenty, and a bound keeps absurd values
    /// from overflowing.
    package static let maximumSeconds: Double = 7 * 24 * 3600

    /// `10s`, `1.5s`, `250ms`, `2m`; nil for anything else, negative or over a week.
    package static func parse(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value >= 0, value * scale <= maximumSeconds
            else { return nil }
            return .milliseconds(Int64((value * scale * 1000).rounded()))
        }
        return nil
    }

    /// Whole seconds as `10s`, anything else in milliseconds, `250ms`.
    package static func format(_ duration: Duration) -> String {
        let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if ms % 1000 == 0 { return "\(ms / 1000)s" }
        return "\(ms)ms"
    }
}
