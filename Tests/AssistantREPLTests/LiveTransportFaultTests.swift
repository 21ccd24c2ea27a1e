import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@testable import AssistantREPL

/// The REPL against live services — played by a loopback server, reached over real sockets
/// with the transport `assistant` uses — when an answer is malformed on the wire: the session
/// goes on, the message fails with its text kept and is offered for retry, and the retry lands.
/// (Over swift-corelibs-foundation 6.3.1 a header block cut short ended the whole process.)
@Suite(.timeLimit(.minutes(2))) struct LiveTransportFaultTests {
    // covers: D5
    @Test func aHeaderBlockCutShortFailsTheSendKeepsTheTextAndTheRetryLands() async throws {
        let server = try LoopbackDemoServer()
        defer { server.stop() }
        server.arm(LoopbackDemoServer.headerBlockCutShort, forPathEndingWith: "/v1/messages")
        let directory = NSTemporaryDirectory() + "live-fault-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let options = try CommandLineOptions.parse(
            [
                "--gravity-url", server.gravityURL.absoluteString, "--shopping-url",
                server.shoppingURL.absoluteString, "--api-key", "live-key", "--width", "120",
            ], environment: [:])
        let printed = Locked<[String]>([])
        let environment = await REPLEnvironment(
            policy: .commandLine(
                options, interactive: false, width: 120, stateDirectory: StateDirectory(path: directory)),
            output: REPLOutput { line in printed.withLock { $0.append(line) } })
        let lines = [":product KIT-1001", ":open", "подарок для мамы", ":state", ":retry", ":quit"]

        // A hang fails the test at the suite's time limit.
        await environment.session.run(reader: ScriptLineReader(lines: lines))

        let output = printed.withLock { $0 }
        let failure = try #require(
            output.firstIndex { $0.contains("✗ not delivered") && $0.contains("(network)") }, "\(output)")
        #expect(output[failure].contains(":retry"), "offered for retry: \(output[failure])")
        let messages = await environment.engine.chatSnapshot.messages
        let user = try #require(messages.first { $0.role == .user })
        #expect(user.text == "подарок для мамы", "the text is kept")
        #expect(user.status == .sent, "the retry landed: \(user.status)")
        #expect(messages.last?.role == .assistant)
    }
}
