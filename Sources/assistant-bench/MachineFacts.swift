import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the figures were measured on.
enum MachineFacts {
    static var lines: [String] {
        let info = ProcessInfo.processInfo
        var lines = [
            "cores: \(info.activeProcessorCount) active of \(info.processorCount)"
                + (cpuModel.map { ", \($0)" } ?? ""),
            "memory: \(Format.bytes(Double(info.physicalMemory)))",
            "system: \(kernel)",
            "swift: \(swiftVersion), \(buildConfiguration) build",
        ]
        if let load = loadAverage { lines.append("load average at start: \(load)") }
        return lines
    }

    static var swiftVersion: String {
        #if compiler(>=6.4)
            return "compiler ≥ 6.4"
        #elseif compiler(>=6.3)
            return "compiler 6.3"
        #elseif compiler(>=6.2)
            return "compiler 6.2"
        #elseif compiler(>=6.1)
            return "compiler 6.1"
        #else
            return "compiler 6.0"
        #endif
    }

    static var buildConfiguration: String {
        #if DEBUG
            return "DEBUG (figures are meaningless: use -c release)"
        #else
            return "release"
        #endif
    }

    private static var cpuModel: String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            return line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    private static var kernel: String {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return "\(field(name.sysname)) \(field(name.release)) \(field(name.machine))"
    }

    private static var loadAverage: String? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
