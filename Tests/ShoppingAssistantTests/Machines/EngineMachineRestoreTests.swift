import Foundation
import Testing

@testable import ShoppingAssistant

/// The dialog across a restart (D18–D20), on the machine: what is saved on every change, what
/// the first opening after `.ready` restores, and what is forgotten instead.
@Suite struct EngineMachineRestoreTests {
    private typealias F = MachineFixtures

    /// A machine of an engine with a dialog store, ready (or not) and with `storedUID`.
    private static func keepingMachine(storedUID: String? = "uid-1", ready: Bool = true) -> EngineMachine {
        var settings = F.settings
        settings.keepsDialog = true
        var machine = EngineMachine(settings: settings, storedUID: storedUID)
        _ = machine.builderRegistered()
        _ = machine.handlerRegistered { _ in true }
        if ready { F.prepareReady(&machine) }
        return machine
    }

    private static func stored(_ actions: [EngineAction]) -> StoredDialog? {
        actions.reversed().lazy.compactMap { action -> StoredDialog? in
            if case .storeDialog(let dialog) = action { return dialog } else { return nil }
        }.first
    }

    /// The dialog a first run left: one message answered and rated, one failed, saved as the
    /// last change left it.
    private static func firstRun() throws -> (machine: EngineMachine, stored: StoredDialog) {
        var machine = keepingMachine()
        try F.open(&machine)
        F.finishHostCalls(&machine)
        let tag = try F.send(&machine)
        var last = machine.shoppingAnswered(
            .message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: { _ in true })
        F.finishHostCalls(&machine)
        last = machine.rateCalled(F.call(400), assistantMessageId: "am-1", rating: .like)
        F.finishHostCalls(&machine)
        let second = try F.send(&machine, "More", messageId: "m-2", call: F.call(500))
        last = machine.shoppingAnswered(
            .message(second), .reply(.failure(F.failure(.network))), canHandle: { _ in true })
        F.finishHostCalls(&machine)
        return (machine, try #require(stored(last)))
    }

    /// A new engine's machine that read `stored` from its store, prepared and opening with a
    /// handler that says `canHandle`.
    private static func restart(
        with stored: StoredDialog, storedUID: String? = "uid-1", selector: String = F.selector,
        canHandle: (AssistantAction) -> Bool = { _ in true }
    ) throws -> (machine: EngineMachine, opened: [EngineAction]) {
        var machine = keepingMachine(storedUID: storedUID, ready: false)
        machine.dialogStoreRead(stored)
        F.prepareAlone(&machine, F.call(100), selector: selector)
        _ = machine.gravityAnswered(
            .configuration(PreparationID(value: machine.nextPreparation)),
            .content(F.answered(F.content(selector: selector), uid: storedUID)), identityEpoch: machine.identity.epoch)
        machine.wallNow = stored.lastActive.addingTimeInterval(60)
        let opened = machine.openCalled(F.call(200), presenter: .available, presenterAlive: true, canHandle: canHandle)
        return (machine, opened)
    }

    // MARK: - D18

    // covers: D18
    @Test func everyChangeOfTheDialogIsSavedAsItIsAndAnEndedDialogEmptiesTheStore() throws {
        var machine = Self.keepingMachine()
        let sent = machine.sendCalled(F.call(1), text: "Gift ideas", messageId: "m-1", newThreadId: "thread-1")
        let sending = try #require(Self.stored(sent))
        #expect(sending.context.threadId == "thread-1")
        #expect(sending.uid == "uid-1")
        #expect(sending.turns.map(\.user.status) == [.sending])
        let tag = DialogTag(dialog: 1, messageId: "m-1", attempt: 1)
        let landed = machine.shoppingAnswered(
            .message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: { _ in true })
        let answered = try #require(Self.stored(landed))
        #expect(answered.turns.map(\.user.status) == [.sent])
        #expect(answered.turns.first?.reply?.content.assistantMessageId == "am-1")
        #expect(answered.turns.first?.reply?.received != nil)  // the reply as received
        let rated = machine.rateCalled(F.call(2), assistantMessageId: "am-1", rating: .dislike)
        #expect(Self.stored(rated)?.turns.first?.reply?.rating == .dislike)
        #expect(machine.newChatCalled(F.call(3)).contains(.forgetStoredDialog))
    }

    // covers: D18
    @Test func anEngineWithoutADialogStoreSavesNothing() throws {
        var machine = F.readyMachine()
        let sent = machine.sendCalled(F.call(1), text: "Gift ideas", messageId: "m-1", newThreadId: "thread-1")
        #expect(Self.stored(sent) == nil)
        let tag = DialogTag(dialog: 1, messageId: "m-1", attempt: 1)
        _ = machine.shoppingAnswered(.message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: { _ in true })
        #expect(machine.dialog.turns.first?.reply != nil)
        #expect(machine.dialog.turns.first?.reply?.content.received == nil, "each reply held once")
        #expect(!machine.newChatCalled(F.call(2)).contains(.forgetStoredDialog))
    }

    // covers: D18
    @Test func theFirstOpeningAfterReadyShowsTheStoredDialogExactlyAsTheFirstRunDid() throws {
        let (first, stored) = try Self.firstRun()
        let (machine, opened) = try Self.restart(with: stored)
        let present = try #require(
            F.hostCallKinds(opened).compactMap { call -> AssistantChatSnapshot? in
                if case .present(_, let snapshot, _, _) = call { return snapshot } else { return nil }
            }.first)
        #expect(present == first.snapshot())  // messages, products, buttons, rating, suggests, title
        #expect(present.messages.map(\.id) == ["m-1", "am-1", "m-2"])
        #expect(present.messages[1].rating == .like)
        #expect(present.messages[1].canRate == false)
        #expect(present.messages[1].productBlock?.products.count == 1)
        #expect(present.messages[2].canRetry)
        #expect(machine.currentThreadId == "thread-1")
        #expect(machine.dialogState == .active)
        // Nothing is sent again, and no reply's impression is requested a second time (AN7).
        #expect(!opened.contains { if case .sendShopping = $0 { return true } else { return false } })
        #expect(!F.trackedURLs(opened).contains("https://t.example/ri"))
    }

    // covers: D18
    @Test func aRestoredDialogGoesOnRetriesByTheSameRequestAndANewChatForgetsIt() throws {
        let (_, stored) = try Self.firstRun()
        var (machine, _) = try Self.restart(with: stored)
        let retried = machine.retryCalled(F.call(600), messageId: "m-2")
        let tag = DialogTag(dialog: machine.dialog.epoch, messageId: "m-2", attempt: 2)
        let request = try #require(stored.turns[1].user.request)
        #expect(retried.contains(.sendShopping(.message(tag), .message(request))))
        #expect(machine.newChatCalled(F.call(700)).contains(.forgetStoredDialog))
        #expect(machine.snapshot().messages.isEmpty)
    }

    // MARK: - D19

    /// The first run ended while `m-1` was being answered.
    private static func endedWhileSending() throws -> StoredDialog {
        var machine = keepingMachine()
        let sent = machine.sendCalled(F.call(1), text: "Gift ideas", messageId: "m-1", newThreadId: "thread-1")
        return try #require(stored(sent))
    }

    // A message leaves after the save of the dialog that shows it sending: a process that ends
    // once the request is out always finds the message to reconcile (D19).
    // covers: D19, D18
    @Test func aMessageIsSavedAsSendingBeforeItsRequestLeaves() throws {
        var machine = Self.keepingMachine()
        let sent = machine.sendCalled(F.call(1), text: "Gift ideas", messageId: "m-1", newThreadId: "thread-1")
        let saved = sent.firstIndex { if case .storeDialog = $0 { return true } else { return false } }
        let posted = sent.firstIndex { if case .sendShopping(.message, _) = $0 { return true } else { return false } }
        let save = try #require(saved)
        let post = try #require(posted)
        #expect(save < post)
        guard case .storeDialog(let dialog) = sent[save] else { return }
        #expect(dialog.turns.last?.user.status == .sending)
    }

    // covers: D19, D5
    @Test func aMessageSendingAtExitReadsHistoryFirstAndAdoptsTheReplyFoundThere() throws {
        let stored = try Self.endedWhileSending()
        var (machine, opened) = try Self.restart(with: stored)
        let tag = DialogTag(dialog: machine.dialog.epoch, messageId: "m-1", attempt: 1)
        #expect(
            opened.contains(
                .sendShopping(.history(tag), .history(threadId: "thread-1", resourceId: "uid-1", tenantId: F.section))))
        // D4: nothing is resent.
        #expect(!opened.contains { if case .sendShopping(.message, _) = $0 { return true } else { return false } })
        #expect(machine.dialogState == .sending)
        let adopted = machine.shoppingAnswered(
            .history(tag), .history(.success(F.history(messageId: "m-1", replyId: "am-h"))), canHandle: { _ in true })
        #expect(machine.dialogState == .active)
        #expect(machine.snapshot().messages.map(\.id) == ["m-1", "am-h"])
        #expect(Self.stored(adopted)?.turns.first?.reply?.content.assistantMessageId == "am-h")
    }

    // covers: D19, D6
    @Test func aMessageSendingAtExitWithoutAReplyInHistoryFailsAndIsRetriedByTheSameID() throws {
        let stored = try Self.endedWhileSending()
        var (machine, _) = try Self.restart(with: stored)
        let tag = DialogTag(dialog: machine.dialog.epoch, messageId: "m-1", attempt: 1)
        _ = machine.shoppingAnswered(
            .history(tag), .history(.success(F.history(messageId: "m-1", replyId: nil))), canHandle: { _ in true })
        let message = try #require(machine.snapshot().messages.first)
        #expect(message.text == "Gift ideas")
        #expect(message.canRetry)
        let retried = machine.retryCalled(F.call(600), messageId: "m-1")
        let again = DialogTag(dialog: machine.dialog.epoch, messageId: "m-1", attempt: 2)
        let resent = retried.first { if case .sendShopping(.message, _) = $0 { return true } else { return false } }
        guard case .sendShopping(.message(again), .message(let request))? = resent else {
            Issue.record("no retry: \(retried)")
            return
        }
        #expect(request.messageId == "m-1")
        #expect(request.threadId == "thread-1")
        #expect(request.text == "Gift ideas")
    }

    // MARK: - D20

    // covers: D20, D17
    @Test func aStoredDialogOfAnotherIdentityIsNeverShownAndIsForgotten() throws {
        let (_, stored) = try Self.firstRun()
        let (machine, opened) = try Self.restart(with: stored, storedUID: "uid-2")
        #expect(opened.contains(.forgetStoredDialog))
        #expect(machine.snapshot().messages.isEmpty)
        #expect(machine.snapshot().title == F.configuration.title)
        #expect(machine.currentThreadId == nil)
    }

    // covers: D20
    @Test func aStoredDialogOfAnotherAssistantIsForgottenAsSoonAsThatAssistantIsReady() throws {
        let (_, stored) = try Self.firstRun()
        var machine = Self.keepingMachine(ready: false)
        machine.dialogStoreRead(stored)
        let ready = F.prepareReady(&machine, selector: "other-assistant")
        #expect(ready.contains(.forgetStoredDialog))
        _ = machine.openCalled(F.call(200), presenter: .available, presenterAlive: true) { _ in true }
        #expect(machine.snapshot().messages.isEmpty)
    }

    // covers: D20
    @Test func aStoredDialogOlderThanTheRetentionIsForgotten() throws {
        let (_, stored) = try Self.firstRun()
        var machine = Self.keepingMachine(ready: false)
        machine.settings.dialogRetention = .seconds(3600)
        machine.dialogStoreRead(stored)
        F.prepareReady(&machine)
        machine.wallNow = stored.lastActive.addingTimeInterval(3601)
        let opened = machine.openCalled(F.call(200), presenter: .available, presenterAlive: true) { _ in true }
        #expect(opened.contains(.forgetStoredDialog))
        #expect(machine.snapshot().messages.isEmpty)
    }

    // covers: D20, D17
    @Test func anIdentityChangeBeforeTheOpeningForgetsTheStoredDialog() throws {
        let (_, stored) = try Self.firstRun()
        var machine = Self.keepingMachine(ready: false)
        machine.dialogStoreRead(stored)
        let changed = machine.setUserCalled(F.call(50), userId: "someone-else", sessionId: nil)
        #expect(changed.contains(.forgetStoredDialog))
        #expect(machine.restorable == nil)
    }

    // covers: D20
    @Test func aNewChatBeforeTheOpeningForgetsTheStoredDialog() throws {
        let (_, stored) = try Self.firstRun()
        var machine = Self.keepingMachine()
        machine.dialogStoreRead(stored)
        #expect(machine.newChatCalled(F.call(50)).contains(.forgetStoredDialog))
        _ = machine.openCalled(F.call(200), presenter: .available, presenterAlive: true) { _ in true }
        #expect(machine.snapshot().messages.isEmpty)
    }

    // MARK: - The stored bytes

    /// The bytes the first run's last change saved.
    private static func storedBytes() throws -> (stored: StoredDialog, data: Data) {
        let (_, stored) = try firstRun()
        return (stored, StoredDialogCodec.encode(stored))
    }

    /// `stored` with turn `turn`'s reply replaced by `reply`.
    private static func replacing(reply turn: Int, of stored: StoredDialog, with reply: ReplyMessage) -> StoredDialog {
        var turns = stored.turns
        turns[turn].reply = reply
        return StoredDialog(context: stored.context, turns: turns, lastActive: stored.lastActive)
    }

    /// Why `data` is refused, `nil` when it reads as a dialog.
    private static func refusal(of data: Data) -> String? {
        do throws(StoredDialogCodec.Failure) {
            _ = try StoredDialogCodec.decode(data)
            return nil
        } catch {
            return error.description
        }
    }

    /// A landed reply to `m-1` whose bytes as received are `bytes`.
    private static func reply(receivedAs bytes: String) throws -> ReplyMessage {
        var content = try F.reply(to: "m-1")
        content.received = ReceivedReply(bytes: Data(bytes.utf8), idKey: .assistantMessageId)
        return ReplyMessage(content: content, buttonsEnabled: [true, true])
    }

    // covers: D18
    @Test func theStoredBytesReadBackAsTheSameDialog() throws {
        let (stored, data) = try Self.storedBytes()
        #expect(try StoredDialogCodec.decode(data).turns.map(\.user.messageId) == ["m-1", "m-2"])
        let (machine, _) = try Self.restart(with: try StoredDialogCodec.decode(data))
        let (direct, _) = try Self.restart(with: stored)
        #expect(machine.snapshot() == direct.snapshot())
        #expect(machine.snapshot().messages.map(\.buttons) == direct.snapshot().messages.map(\.buttons))
    }

    // covers: D18, C7
    @Test func aRestoredChatShowsItsLastReplysSuggestsWithoutDecodingAnyReply() throws {
        let (stored, data) = try Self.storedBytes()
        let restored = try StoredDialogCodec.decode(data)
        let (machine, _) = try Self.restart(with: restored)
        let (direct, _) = try Self.restart(with: stored)
        #expect(machine.snapshot().suggests == ["Cheaper", "For him"])
        #expect(machine.snapshot().suggests == direct.snapshot().suggests)
        let replies = try #require(restored.turns[0].reply?.restoredReplies)
        #expect(replies.decodedCount == 0)
        _ = machine.snapshot().messages[1].text  // decoded once read: its suggests are then the content's
        #expect(replies.decodedCount == 1)
        #expect(machine.snapshot().suggests == ["Cheaper", "For him"])
    }

    // covers: D18, D20, C7
    @Test func aRestoredReplyWhoseIDDoesNotReadBackOffersNoSuggestsAsItIsShownEmpty() throws {
        let (stored, _) = try Self.storedBytes()
        let other = try Self.reply(
            receivedAs: #"{"assistantMessageId": "am-9", "text": "Other", "ui": {"suggests": ["Cheaper"]}}"#)
        let restored = try StoredDialogCodec.decode(
            StoredDialogCodec.encode(Self.replacing(reply: 0, of: stored, with: other)))
        let (machine, _) = try Self.restart(with: restored)
        #expect(machine.snapshot().suggests.isEmpty)
        #expect(machine.snapshot().messages[1].text.isEmpty)
        #expect(machine.snapshot().suggests.isEmpty)
    }

    // covers: D18
    @Test func eachReplyIsKeptInTheFileExactlyAsReceived() throws {
        let (stored, data) = try Self.storedBytes()
        let received = try #require(stored.turns[0].reply?.received?.bytes)
        #expect(data.range(of: received) != nil)
        #expect(try StoredDialogCodec.decode(data).turns[0].reply?.received?.bytes == received)
    }

    // covers: D18
    @Test func aDialogReadBackAndSavedAgainIsTheSameBytes() throws {
        let (_, data) = try Self.storedBytes()
        let restored = try StoredDialogCodec.decode(data)
        #expect(StoredDialogCodec.encode(restored) == data)
        // Its replies read back as they were, decoded from the bytes kept.
        let (_, stored) = try Self.firstRun()
        #expect(restored.turns[0].reply?.content == stored.turns[0].reply?.content)
    }

    // covers: D18, AC4
    @Test func aRestoredDialogOffersItsButtonsAsTheNewRunsHandlerSays() throws {
        let (_, data) = try Self.storedBytes()
        var (machine, _) = try Self.restart(with: try StoredDialogCodec.decode(data)) { action in
            action.name != "open_support_chat"
        }
        F.finishHostCalls(&machine)
        let offered = { (machine: EngineMachine) in machine.snapshot().messages[1].buttons.map(\.isEnabled) }
        #expect(offered(machine) == [false, true])  // the support chat refused, the delivery URL offered
        #expect(
            machine.replyButtonPressed(F.call(900), assistantMessageId: "am-1", index: 0)
                == [.complete(F.call(900), .interaction(.notActionable))])
        _ = machine.handlerRegistered { _ in true }
        #expect(offered(machine) == [true, true])
    }

    // covers: D20
    @Test(arguments: [
        "", "{", "[]", #"{"version":1}"#, "null", String(repeating: "[", count: 10_000),
    ])
    func bytesThatAreNotADialogAreRefusedWithAReason(_ text: String) {
        #expect(throws: StoredDialogCodec.Failure.self) { try StoredDialogCodec.decode(Data(text.utf8)) }
    }

    // covers: D20
    @Test func aFileCutShortAnywhereIsRefused() throws {
        let (_, data) = try Self.storedBytes()
        for length in 0..<data.count {
            #expect(throws: StoredDialogCodec.Failure.self) { try StoredDialogCodec.decode(data.prefix(length)) }
        }
    }

    // covers: D20
    @Test func aFileDamagedAnywhereIsRefusedOrLosesOnlyTheDamagedReply() throws {
        let (stored, data) = try Self.storedBytes()
        let received = try #require(stored.turns[0].reply?.received?.bytes)
        let reply = try #require(data.range(of: received))
        #expect(reply.upperBound == data.count)  // the replies' bytes follow the index
        var restoredCount = 0
        for offset in 0..<data.count {
            var damaged = data
            damaged[offset] ^= 0x20
            let logs = LogCollector()
            guard reply.contains(offset),
                let restored = try? StoredDialogCodec.decode(damaged, logger: logs.makeLogger())
            else {
                #expect(throws: StoredDialogCodec.Failure.self) { try StoredDialogCodec.decode(damaged) }
                continue
            }
            // The restore reads no reply's bytes: a damaged one is found when it is first read.
            restoredCount += 1
            let (machine, _) = try Self.restart(with: restored)
            #expect(machine.snapshot().suggests.isEmpty)
            let messages = machine.snapshot().messages
            #expect(messages.map(\.id) == ["m-1", "am-1", "m-2"])
            #expect(messages[1].text.isEmpty)
            #expect(messages[1].productBlock == nil)
            #expect(messages[1].buttons.isEmpty)
            #expect(logs.errors.contains { $0.contains("damaged: its checksum does not match its bytes") })
        }
        #expect(restoredCount >= reply.count - 2)  // only its braces, damaged, make it no object at all
    }

    // covers: D20
    @Test func aDamagedReplySavedAgainIsStillFoundDamaged() throws {
        let (stored, data) = try Self.storedBytes()
        let received = try #require(stored.turns[0].reply?.received?.bytes)
        let reply = try #require(data.range(of: received))
        var damaged = data
        damaged[reply.lowerBound + reply.count / 2] ^= 0x20
        // Saved again unread, and again once read: its checksum as saved goes with it each time.
        let restored = try StoredDialogCodec.decode(damaged)
        #expect(StoredDialogCodec.encode(restored) == damaged)
        #expect(restored.turns[0].reply?.content.text == "")
        #expect(StoredDialogCodec.encode(restored) == damaged)
        let logs = LogCollector()
        let again = try StoredDialogCodec.decode(StoredDialogCodec.encode(restored), logger: logs.makeLogger())
        #expect(again.turns[0].reply?.content.text == "")
        #expect(logs.errors.contains { $0.contains("damaged: its checksum does not match its bytes") })
    }

    // covers: D20
    @Test(arguments: [UInt16(1), 2, 4, 0xFFFF])
    func aFileOfAnotherVersionIsRefusedNamingIt(_ version: UInt16) throws {
        var (_, data) = try Self.storedBytes()
        data.replaceSubrange(8..<10, with: [UInt8(version & 0xFF), UInt8(version >> 8)])
        #expect(Self.refusal(of: data)?.contains("is of version \(version),") == true)
    }

    // covers: D20
    @Test func aFileMadeByHandWithAGoodChecksumIsRefusedOrShownNeverACrash() throws {
        let (_, data) = try Self.storedBytes()
        let header = StoredDialogCodec.headerBytes
        let indexLength = data[(header - 4)..<header].reversed().reduce(0) { $0 << 8 | Int($1) }
        var random = SplitMix64(seed: 20_261_207)
        var restored = 0
        for _ in 0..<300 {
            // A few bytes changed anywhere after the header, the index's checksum made anew to match.
            var body = Array(data[header...])
            for _ in 0...(random.next() % 4) {
                body[Int(random.next() % UInt64(body.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            var file = Array(data[..<(header - 12)])
            withUnsafeBytes(of: body[..<indexLength].withUnsafeBytes(Checksum.xxh64).littleEndian) { file += $0 }
            file += data[(header - 4)..<header]
            file += body
            guard let dialog = try? StoredDialogCodec.decode(Data(file)) else { continue }
            restored += 1
            let (machine, _) = try Self.restart(with: dialog)
            for message in machine.snapshot().messages {  // every reply decoded, whatever it holds
                _ = (message.text, message.productBlock?.products.map(\.name), message.buttons.map(\.title))
            }
        }
        #expect(restored > 0)  // some changes fall where only text or a reply's bytes change
    }

    // covers: D20
    @Test(arguments: ["not a reply", "[1, 2]", "", #""{}""#])
    func bytesThatAreNotAReplyRefuseTheWholeDialog(_ bytes: String) throws {
        let (stored, _) = try Self.storedBytes()
        let data = StoredDialogCodec.encode(
            Self.replacing(reply: 0, of: stored, with: try Self.reply(receivedAs: bytes)))
        #expect(Self.refusal(of: data) == "has a reply (0) that is not one")
    }

    // covers: D20
    @Test func aStoredReplyThatNoLongerDecodesIsShownEmptyAndLoggedNeverACrash() throws {
        let (stored, _) = try Self.storedBytes()
        let broken = Self.replacing(
            reply: 0, of: stored, with: try Self.reply(receivedAs: #"{"text": , "products": }"#))
        let logs = LogCollector()
        let restored = try StoredDialogCodec.decode(StoredDialogCodec.encode(broken), logger: logs.makeLogger())
        let (machine, _) = try Self.restart(with: restored)
        let messages = machine.snapshot().messages
        #expect(messages.map(\.id) == ["m-1", "am-1", "m-2"])
        #expect(messages[1].text.isEmpty)
        #expect(messages[1].productBlock == nil)
        #expect(messages[1].buttons.isEmpty)
        #expect(logs.errors.contains { $0.contains("does not read back as stored") })
    }

    // covers: D20
    @Test func aFileHoldingAMessageTwiceIsNotRestoredAndIsForgotten() throws {
        let (stored, _) = try Self.storedBytes()
        var turns = stored.turns
        turns.append(stored.turns[0])
        let twice = StoredDialog(context: stored.context, turns: turns, lastActive: stored.lastActive)
        let (machine, opened) = try Self.restart(with: try StoredDialogCodec.decode(StoredDialogCodec.encode(twice)))
        #expect(opened.contains(.forgetStoredDialog))
        #expect(opened.contains(.log(.error, "dialog store: the stored dialog holds a message ID twice: not restored")))
        #expect(machine.snapshot().messages.isEmpty)
        #expect(machine.currentThreadId == nil)
    }
}
