import Foundation
import ShoppingAssistant

/// What the demo store's Shopping API received (messages and ratings), one JSON line each, in
/// a file: a demo store started again on the same file reads it back and replays it, so its
/// threads, replies and history are those of the earlier run — as a restarted app meets the
/// same server (D18, D19).
///
/// The store's state is a function of what it received (its replies are composed
/// deterministically), so the requests are all it keeps. A line that cannot be read (a torn
/// last line, a foreign file) is skipped; reading costs time linear in the file.
struct DemoThreadJournal: Sendable {
    private struct Line: Codable {
        /// `messages` or `feedback`.
        var endpoint: String
        var url: String
        /// The `Content-Type` the request came with (a Shopping request carries no credential, S5).
        var contentType: String?
        var body: Data
    }

    let fileURL: URL

    /// The requests in the file, in the order received; none when there is no file.
    func requests() -> [(DemoEndpoint, HTTPRequest)] {
        guard let data = FileManager.default.contents(atPath: fileURL.path) else { return [] }
        var requests: [(DemoEndpoint, HTTPRequest)] = []
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let read = try? JSONDecoder().decode(Line.self, from: Data(line)), let url = URL(string: read.url)
            else { continue }
            let endpoint: DemoEndpoint
            switch read.endpoint {
            case "messages": endpoint = .messages
            case "feedback": endpoint = .feedback
            default: continue
            }
            let headers = read.contentType.map { ["Content-Type": $0] } ?? [:]
            requests.append((endpoint, HTTPRequest(method: .post, url: url, headers: headers, body: read.body)))
        }
        return requests
    }

    /// Appends `request`, received on `endpoint`; a failure loses only what a restart would see.
    func append(_ endpoint: DemoEndpoint, _ request: HTTPRequest) {
        let name: String
        switch endpoint {
        case .messages: name = "messages"
        case .feedback: name = "feedback"
        default: return
        }
        guard
            var line = try? JSONEncoder().encode(
                Line(
                    endpoint: name, url: request.url.absoluteString, contentType: request.header("Content-Type"),
                    body: request.body ?? Data()))
        else { return }
        line.append(UInt8(ascii: "\n"))
        let path = fileURL.path
        if !FileManager.default.fileExists(atPath: path) {
            try? FileManager.default.createDirectory(
                at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        defer { try? handle.close() }
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: line)
        } catch {
            return
        }
    }
}
