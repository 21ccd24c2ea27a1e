import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Timing

/// Timing helpers on `ContinuousClock`, the monotonic wall clock.
enum Timing {
    static let clock = ContinuousClock()

    static var now: ContinuousClock.Instant { clock.now }

    /// Runs `body` once and returns how long it took.
    static func measure(_ body: () throws -> Void) rethrows -> Duration {
        let start = clock.now
        try body()
        return start.duration(to: clock.now)
    }

    /// Runs `body` once and returns how long it took.
    static func measure(_ body: () async throws -> Void) async rethrows -> Duration {
        let start = clock.now
        try await body()
        return start.duration(to: clock.now)
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }

    /// A short human form: `812 ns`, `45.3 µs`, `12.8 ms`, `3.21 s`.
    var short: String { Format.seconds(seconds) }
}

// MARK: - Statistics

/// A set of timed samples of one measurement.
struct Samples {
    private(set) var values: [Double] = []

    init(_ values: [Double] = []) { self.values = values }

    mutating func append(_ duration: Duration) { values.append(duration.seconds) }
    mutating func append(seconds: Double) { values.append(seconds) }

    var count: Int { values.count }
    var median: Double { percentile(50) }
    var minimum: Double { values.min() ?? .nan }
    var maximum: Double { values.max() ?? .nan }
    var total: Double { values.reduce(0, +) }

    /// The `p`-th percentile (0–100), by linear interpolation between closest ranks.
    func percentile(_ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let rank = p / 100 * Double(sorted.count - 1)
        let lower = Int(rank.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        let weight = rank - Double(lower)
        return sorted[lower] * (1 - weight) + sorted[upper] * weight
    }

    /// `median 1.2 ms (p10 1.1 ms, p90 1.5 ms, n=200)`.
    var summary: String {
        "median \(Format.seconds(median)) (p10 \(Format.seconds(percentile(10))), "
            + "p90 \(Format.seconds(percentile(90))), n=\(count))"
    }
}

// MARK: - Formatting

enum Format {
    static func seconds(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        let magnitude = abs(value)
        if magnitude < 1e-6 { return String(format: "%.0f ns", value * 1e9) }
        if magnitude < 1e-3 { return String(format: "%.1f µs", value * 1e6) }
        if magnitude < 1 { return String(format: "%.2f ms", value * 1e3) }
        return String(format: "%.2f s", value)
    }

    static func bytes(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        let magnitude = abs(value)
        if magnitude < 10 * 1024 { return String(format: "%.0f B", value) }
        if magnitude < 10 * 1024 * 1024 { return String(format: "%.1f KiB", value / 1024) }
        return String(format: "%.1f MiB", value / 1024 / 1024)
    }

    static func ratio(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        return String(format: "%.2f×", value)
    }

    static func rate(_ perSecond: Double) -> String {
        guard perSecond.isFinite else { return "n/a" }
        if perSecond >= 1e6 { return String(format: "%.2f M/s", perSecond / 1e6) }
        if perSecond >= 1e3 { return String(format: "%.1f k/s", perSecond / 1e3) }
        return String(format: "%.0f /s", perSecond)
    }

    static func count(_ value: Int) -> String {
        let digits = String(value)
        var result = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0, index % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return String(result.reversed())
    }
}

// MARK: - Memory

/// Process memory as the kernel and the allocator see it.
enum Memory {
    struct Sample {
        /// Resident set size from `/proc/self/statm`.
        let resident: Int
        /// Bytes handed out by malloc (`mallinfo2`: `uordblks + hblkhd`), when available.
        let heapInUse: Int?
    }

    /// Returns freed memory to the kernel first, so that RSS reflects live data.
    static func sample() -> Sample {
        trim()
        return Sample(resident: residentBytes(), heapInUse: heapInUseBytes())
    }

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// `mallinfo2()` is declared in `<malloc.h>`, which the Glibc module does not import, so it
    /// is looked up at run time. It returns a 10-word struct; on x86-64 System V such a struct
    /// is returned through a hidden pointer passed as the first argument (and echoed back), so
    /// it can be called as `(buffer) -> buffer`. Elsewhere the figure is reported as n/a.
    static func heapInUseBytes() -> Int? {
        #if arch(x86_64) && os(Linux)
            typealias MallInfo2 = @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallinfo2") else { return nil }
            let function = unsafeBitCast(symbol, to: MallInfo2.self)
            var fields = [Int](repeating: 0, count: 10)
            fields.withUnsafeMutableBytes { buffer in _ = function(buffer.baseAddress!) }
            // arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost
            return fields[7] + fields[4]
        #else
            return nil
        #endif
    }

    /// The size of the heap block holding `object` (`malloc_usable_size`, from `<malloc.h>`).
    static func blockSize(of object: AnyObject) -> Int? {
        #if os(Linux)
            typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size") else { return nil }
            return unsafeBitCast(symbol, to: UsableSize.self)(Unmanaged.passUnretained(object).toOpaque())
        #else
            return nil
        #endif
    }

    /// `malloc_trim(0)`, also from `<malloc.h>`.
    static func trim() {
        #if os(Linux)
            typealias MallocTrim = @convention(c) (Int) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
            _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }

    /// Growth between two samples, divided among `count` items.
    static func perItem(from before: Sample, to after: Sample, count: Int) -> (resident: Double, heap: Double?) {
        let resident = Double(after.resident - before.resident) / Double(count)
        guard let heapBefore = before.heapInUse, let heapAfter = after.heapInUse else { return (resident, nil) }
        return (resident, Double(heapAfter - heapBefore) / Double(count))
    }
}
