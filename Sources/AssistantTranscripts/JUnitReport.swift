import Foundation

/// The results of a replay run as JUnit XML, the format CI systems read test results in: one
/// `testsuite`, one `testcase` per file, a `failure` holding the diff for each file that failed.
package enum JUnitReport {
    package static func xml(
        suite: String, results: [TranscriptRunner.FileResult], seconds: Double, timestamp: Date = Date()
    ) -> String {
        let failures = results.filter { $0.status == .failed }.count
        let stamp = ISO8601DateFormatter().string(from: timestamp)
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<testsuites name="\#(escape(suite))" tests="\#(results.count)" failures="\#(failures)" errors="0" time="\#(format(seconds))">"#,
            #"  <testsuite name="\#(escape(suite))" tests="\#(results.count)" failures="\#(failures)" errors="0" skipped="0" time="\#(format(seconds))" timestamp="\#(stamp)">"#,
        ]
        for result in results {
            let directory = (result.path as NSString).deletingLastPathComponent
            let classname = directory.isEmpty ? "transcripts" : directory
            let open =
                #"    <testcase classname="\#(escape(classname))" name="\#(escape(result.path))" file="\#(escape(result.path))" time="\#(format(result.seconds))""#
            if result.status == .failed {
                let report = result.report ?? "failed"
                let first =
                    result.headline ?? report.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? report
                lines.append(open + ">")
                lines.append(
                    #"      <failure message="\#(escape(first))" type="TranscriptMismatch">\#(escape(report))</failure>"#
                )
                lines.append("    </testcase>")
            } else {
                lines.append(open + "/>")
            }
        }
        lines.append("  </testsuite>")
        lines.append("</testsuites>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text as XML character data or an attribute value: markup escaped, and characters XML
    /// 1.0 cannot carry (other control characters) written as `\u{…}`.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                let value = scalar.value
                if value < 0x20 || value == 0xFFFE || value == 0xFFFF {
                    out += "\\u{\(String(value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    private static func format(_ seconds: Double) -> String {
        String(format: "%.3f", seconds)
    }
}
