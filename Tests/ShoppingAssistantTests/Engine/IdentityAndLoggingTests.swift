import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

// A regression that loses a result makes a test wait forever; the limit turns that into a failure.
@Suite(.timeLimit(.minutes(2))) struct IdentityAndLoggingTests {

    private let userText = "please find a gift for grandma"
    private let replyText = "Вот несколько идей до 3000 ₽."

    /// A harness whose logger sends every line that passes `level` to the returned collector.
    private func harness(level: AssistantLogLevel, storedUID: String? = "u-8f3c") async -> (
        EngineHarness, CollectedValues<String>, CollectedValues<AssistantLogLevel>
    ) {
        let messages = CollectedValues<String>()
        let levels = CollectedValues<AssistantLogLevel>()
        let logger = AssistantLogger(level: level) { level, message in
            levels.append(level)
            messages.append(message)
        }
        let h = await EngineHarness(storedUID: storedUID, logger: logger)
        return (h, messages, levels)
    }

    /// Prepares, opens, exchanges one message and closes: every kind of log line.
    private func runASession(_ h: EngineHarness, text: String) async {
        await h.openReady()
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        await h.landOneReply(text)
        h.expectEvents(1)  // chat_dialog_close
        await h.engine.closeAssistant()
        await h.verify()
    }

    // MARK: - B2 Logging

    // covers: B2
    @Test func apiKeyNeverAppearsInAnyLogLine() async {
        let (h, messages, _) = await harness(level: .debug)
        await runASession(h, text: userText)
        h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(.text(401, "bad key \(Fixtures.apiKey)")))
        _ = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
        #expect(!messages.all.isEmpty)
        #expect(messages.all.contains { $0.contains("/choose") })
        for message in messages.all {
            #expect(!message.contains(Fixtures.apiKey), "leaked: \(message)")
            #expect(!message.contains("Bearer"), "leaked: \(message)")
        }
        await h.verify()
    }

    // covers: B2
    @Test func explicitLogLinesAreRedactedToo() {
        let messages = CollectedValues<String>()
        let logger = AssistantLogger(level: .debug) { _, message in messages.append(message) }
        let engine = AssistantEngine(
            configuration: AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section),
            transport: ScriptedTransport(clock: ManualClock()), logger: logger)
        engine.logger.log(.error, "Authorization: Bearer \(Fixtures.apiKey)")
        #expect(messages.all.count == 1)
        #expect(messages.all.allSatisfy { !$0.contains(Fixtures.apiKey) })
    }

    // covers: B2
    @Test func chatTextIsLoggedOnlyAtDebug() async {
        for level in [AssistantLogLevel.info, .error] {
            let (h, messages, _) = await harness(level: level)
            await runASession(h, text: userText)
            #expect(!messages.all.isEmpty || level == .error)
            for message in messages.all {
                #expect(!message.contains(userText), "chat text at \(level): \(message)")
                #expect(!message.contains(replyText), "reply text at \(level): \(message)")
            }
        }
        let (h, messages, _) = await harness(level: .debug)
        await runASession(h, text: userText)
        #expect(messages.all.contains { $0.contains(userText) })
    }

    // covers: B2
    @Test func levelsFilterWhatReachesTheListener() async {
        // .debug: HTTP traffic and everything above it.
        let (debug, _, debugLevels) = await harness(level: .debug)
        await runASession(debug, text: userText)
        #expect(debugLevels.all.contains(.debug))
        #expect(debugLevels.all.contains(.info))

        // .info: no HTTP traffic.
        let (info, _, infoLevels) = await harness(level: .info)
        await runASession(info, text: userText)
        #expect(infoLevels.all.contains(.info))
        #expect(!infoLevels.all.contains(.debug))

        // .error (the default): a quiet success; a failed preparation is its result, not an error;
        // a failure only the log can report (B5: getContentBySelector returns nil) is one.
        let (error, errorMessages, errorLevels) = await harness(level: .error)
        await runASession(error, text: userText)
        #expect(errorMessages.all.isEmpty)
        error.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(.text(400, "")))
        #expect(
            await error.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage) != .ready)
        #expect(errorMessages.all.isEmpty)
        error.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(.text(400, "")))
        #expect(await error.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.homePage) == nil)
        #expect(errorMessages.all.count == 1)
        #expect(errorLevels.all.allSatisfy { $0 == .error })
        await error.verify()

        // .none: silence, even for failures.
        let (none, noneMessages, _) = await harness(level: .none)
        none.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(.text(400, "")))
        _ = await none.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
        #expect(noneMessages.all.isEmpty)
        await none.verify()
    }

    // covers: B2
    @Test func defaultLevelIsErrorAndLevelsAreOrdered() {
        #expect(AssistantLogger().level == .error)
        #expect(AssistantLogLevel.debug < .info && AssistantLogLevel.info < .error && AssistantLogLevel.error < .none)
        let messages = CollectedValues<String>()
        let logger = AssistantLogger(level: .info) { _, message in messages.append(message) }
        logger.log(.debug, "hidden")
        logger.log(.info, "shown")
        logger.log(.none, "never")
        logger.level = .error
        logger.log(.info, "hidden too")
        logger.log(.error, "shown too")
        #expect(messages.all == ["shown", "shown too"])
        #expect(!logger.isEnabled(.info))
        logger.setListener(nil)
        logger.log(.error, "nobody listens")
        #expect(messages.all.count == 2)
    }

    // MARK: - B3 Identity

    // covers: B3
    @Test func managedUIDIsPersistedFromChoose() async {
        let h = await EngineHarness(storedUID: nil)
        h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose(uid: "u-new", ses: "s-9")))
        #expect(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
                == .ready)
        #expect(h.identityStore.loadUid() == "u-new")
        #expect(await h.engine.canonicalUserId == "u-new")
        await h.verify()
    }

    // covers: B3
    @Test func managedUIDIsUpdatedFromResponsesAndSesStaysInMemory() async {
        let h = await EngineHarness(storedUID: "u-old")
        let visit = h.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "u-8f3c")))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        let first = Fixtures.body(h.transport.request(for: visit))["user"] as? [String: Any] ?? [:]
        #expect(first["uid"] as? String == "u-old")
        #expect(first["ses"] == nil)
        #expect(h.identityStore.loadUid() == "u-8f3c")

        let next = h.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "u-8f3c")))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        let user = Fixtures.body(h.transport.request(for: next))["user"] as? [String: Any] ?? [:]
        #expect(user["uid"] as? String == "u-8f3c")
        #expect(user["ses"] as? String == "s-1")

        // A new engine on the same store (a restart) knows the uid but not the session.
        let restarted = AssistantEngine(
            configuration: AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section),
            transport: h.transport, clock: h.clock, identityStore: h.identityStore)
        let again = h.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "u-8f3c")))
        await restarted.trackView(pageContext: Fixtures.homePage)
        let restartedUser = Fixtures.body(h.transport.request(for: again))["user"] as? [String: Any] ?? [:]
        #expect(restartedUser["uid"] as? String == "u-8f3c")
        #expect(restartedUser["ses"] == nil)
        await h.verify()
    }

    // covers: B3
    @Test func setUserSendsTheManualIdsButTheAssistantUsesTheCanonicalUID() async {
        let h = await EngineHarness(storedUID: "u-8f3c")
        await h.engine.setUser(userId: "crm-42", sessionId: "crm-session-7")
        let choose = h.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose(uid: "u-canonical", ses: "s-5")))
        #expect(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
                == .ready)
        let user = Fixtures.body(h.transport.request(for: choose))["user"] as? [String: Any] ?? [:]
        #expect(user["custom"] as? String == "crm-42")
        #expect(user["uid"] == nil, "the app's id is never sent as uid")
        #expect(user["ses"] as? String == "crm-session-7")
        #expect(await h.engine.canonicalUserId == "u-canonical")

        // Later Gravity calls keep sending the manual ids.
        let visit = h.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "u-canonical")))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        let visitUser = Fixtures.body(h.transport.request(for: visit))["user"] as? [String: String] ?? [:]
        #expect(visitUser == ["custom": "crm-42", "ses": "crm-session-7"])

        await h.landOneReply()
        let message = h.transport.requests.last { $0.url.path.hasSuffix("/v1/messages") }
        let body = Fixtures.body(message)
        #expect(body["resourceId"] as? String == "u-canonical")
        #expect((body["runtimeContext"] as? [String: Any])?["uid"] as? String == "u-canonical")
        #expect(!PrepFixtures.bodyText(message).contains("crm-42"))
        await h.verify()
    }
}
