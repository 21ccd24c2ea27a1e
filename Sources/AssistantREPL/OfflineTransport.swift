import Foundation
import ShoppingAssistant

/// The REPL's network switch (`:offline`, `:online`): while it is off, every request of either
/// service fails to connect, as on a plane or in a tunnel, whatever answers behind it (the demo
/// store, live services, a transcript's replay).
package final class NetworkSwitch: Sendable {
    private let offline = Locked(false)

    package init() {}

    /// Whether requests fail to connect now.
    package var isOffline: Bool { offline.withLock { $0 } }

    /// Turns the network off (`true`) or back on.
    package func setOffline(_ value: Bool) { offline.withLock { $0 = value } }
}

/// A transport in front of the session's own that refuses every request while its switch is
/// off: `HTTPTransportError.cannotConnect("offline")`, so nothing reaches the server (nor a
/// recording, nor a replay's file) and the engine treats it as any refused connection.
///
/// On virtual time a refused request still waits its turn in `held`, as an answer of the demo
/// store does: two requests refused in one step print their failures in an order no scheduler
/// changes.
struct OfflineTransport: HTTPTransport {
    let inner: any HTTPTransport
    let network: NetworkSwitch
    let held: HeldRequests?

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard network.isOffline else { return try await inner.send(request) }
        if let held {
            let text =
                "\(request.method.rawValue) \(request.url.absoluteString) "
                + String(decoding: request.body ?? Data(), as: UTF8.self)
            try await held.hold { HeldRequests.Rank(order: 0, text: text) }
            // Back online while it waited its turn (`:online &`): it goes after all.
            guard network.isOffline else { return try await inner.send(request) }
        }
        throw HTTPTransportError.cannotConnect("offline")
    }
}
