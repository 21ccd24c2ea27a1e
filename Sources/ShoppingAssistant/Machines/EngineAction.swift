/// Identifies one call of the public API that waits for the engine: the actor parks its
/// caller under this ID and resumes it when the machine says `.complete(id, …)`.
struct CallID: Hashable, Sendable, CustomStringConvertible {
    let value: UInt64
    /// The call was made from inside a host callback (H1): it must never wait for the host,
    /// since the host may be waiting for it.
    var insideHostCallback = false

    var description: String { insideHostCallback ? "call#\(value) (inside a host callback)" : "call#\(value)" }
}

/// Identifies one host callback under way; its return comes back as `hostCallFinished(id)`,
/// and a return the machine no longer expects (an older opening's, one after a shutdown) is
/// dropped.
struct HostCallID: Hashable, Sendable, CustomStringConvertible {
    let value: UInt64
    var description: String { "host call#\(value)" }
}

/// Names one request the engine sent; its answer comes back as an event under the same ID,
/// so the machine can tell whose answer it is and drop it when it is stale.
enum RequestID: Hashable, Sendable, CustomStringConvertible {
    /// The assistant configuration's `/choose` of a preparation (P1–P3).
    case configuration(PreparationID)
    /// A host call to Gravity (`trackView`, `triggerEvent`, `getContentBySelector`).
    case host(CallID)
    /// A message's `/v1/messages` (D2–D6).
    case message(DialogTag)
    /// The history read after an uncertain outcome (D5).
    case history(DialogTag)
    /// A rating's `/v1/feedback` (D11).
    case feedback(dialog: UInt64, turn: Int)
    /// One `/choose` for several content calls made together (B16); `ContentBatcher` knows
    /// whose they are.
    case contents(UInt64)
    /// A queued record raised before any identity was known, sent by the outbox as the
    /// session's first request (B8, DL7), under the number its owner was asked by.
    case queued(UInt64)

    var description: String {
        switch self {
        case .configuration(let id): return "/choose of \(id)"
        case .contents(let merged): return "merged /choose#\(merged)"
        case .host(let call): return "gravity request of \(call)"
        case .message(let tag): return "message \(tag)"
        case .history(let tag): return "history read for \(tag)"
        case .feedback(let dialog, let turn): return "rating of dialog#\(dialog) turn \(turn)"
        case .queued(let owner): return "queued record of owner request#\(owner)"
        }
    }
}

/// Names one deadline; when it passes, the engine feeds `timerFired` back.
enum TimerID: Hashable, Sendable, CustomStringConvertible {
    /// A preparation's overall deadline (P3).
    case preparation(PreparationID)
    /// A message's 120 s reply deadline (D3), or the bound on its history read (D5).
    case reply(DialogTag)
    /// A Gravity call's own deadline (B13).
    case gravity(RequestID)
    /// The `delayTime` of the in-app campaign whose turn has come (B6).
    case campaignDelay(UInt64)
    /// The end of the instant in which content calls wait for the others made with them (B16).
    case contentWindow

    var description: String {
        switch self {
        case .preparation(let id): return "deadline of \(id)"
        case .reply(let tag): return "reply deadline of \(tag)"
        case .gravity(let id): return "deadline of \(id)"
        case .campaignDelay(let turn): return "delay of in-app campaign turn \(turn)"
        case .contentWindow: return "end of the content calls' instant"
        }
    }
}

/// A Gravity API V2 request, as the machine decided it; the actor's clients encode it.
enum GravityCall: Hashable, Sendable {
    case choose(selector: String, settings: GravityContentSettings, envelope: GravityClient.Envelope)
    /// Content calls made together (B16): one `data` item per selector, each with its own `option`.
    case chooseTogether([GravitySelectorRequest], envelope: GravityClient.Envelope)
    case visit(GravityClient.Envelope)
    case event([GravityEvent], GravityClient.Envelope)

    /// The same request sent as `user`: one that waited at the session gate carries the
    /// session the first answer brought (B8).
    /// Who it is sent as.
    var user: GravityUser {
        switch self {
        case .choose(_, _, let envelope), .chooseTogether(_, let envelope), .visit(let envelope),
            .event(_, let envelope):
            return envelope.user
        }
    }

    func sent(as user: GravityUser) -> GravityCall {
        switch self {
        case .choose(let selector, let settings, var envelope):
            envelope.user = user
            return .choose(selector: selector, settings: settings, envelope: envelope)
        case .chooseTogether(let items, var envelope):
            envelope.user = user
            return .chooseTogether(items, envelope: envelope)
        case .visit(var envelope):
            envelope.user = user
            return .visit(envelope)
        case .event(let events, var envelope):
            // DL7: an event raised under a known identity stays that identity's, whatever
            // happened at the gate meanwhile; it takes the session only when it is the same user.
            envelope.user = envelope.user.owner(sentAs: user)
            return .event(events, envelope)
        }
    }
}

/// A Shopping API request, as the machine decided it.
enum ShoppingCall: Hashable, Sendable {
    /// The same value is sent again for a retry, and encodes to the same bytes (D6).
    case message(ShoppingMessageRequest)
    case history(threadId: String, resourceId: String, tenantId: String)
    case feedback(ShoppingFeedbackRequest)
}

/// What a call of the public API returns, once the machine decided it.
enum CallResult: Hashable, Sendable {
    case prepare(AssistantPrepareResult)
    case open(AssistantOpenResult)
    case send(Result<String, AssistantSendRefusal>)
    case rating(AssistantRatingResult)
    case interaction(AssistantInteractionResult)
    case content(ContentResponse?)
    /// `getUserId()`: the canonical uid, if one is known (B14).
    case userId(String?)
    /// The call has nothing to return; it is over.
    case done
}

/// A host callback for the actor to start now (H1). Callbacks run outside the engine's
/// ordering: the machine keeps each channel in order by starting a channel's next call only
/// once the previous one returned — the presenter's present, updates and dismiss one at a
/// time (per opening), hand-overs one at a time, in-app campaigns one at a time — and nothing
/// else ever waits in line behind a callback.
enum HostCall: Hashable, Sendable {
    /// Show the chat with its first snapshot (O1) on the presenter given to the `openAssistant`
    /// call `presenter`.
    case present(OpeningID, AssistantChatSnapshot, revision: UInt64, presenter: CallID)
    /// A newer snapshot of the chat on screen.
    case update(OpeningID, AssistantChatSnapshot, revision: UInt64)
    /// Remove the chat screen (O5).
    case dismiss(OpeningID)
    /// Navigation the assistant asks for, after the chat closed (PR10, AC5).
    case handOver(AssistantAction)
    /// An auto-shown in-app campaign, when no presentation lock holds it back (B6, O7).
    case showInAppCampaign(InAppCampaign)
}

/// What a host callback under way was for, without its payload: how the machine reads its
/// return (and checks that it is still about the current opening).
enum HostCallPurpose: Hashable, Sendable {
    case present(OpeningID, revision: UInt64)
    case update(OpeningID, revision: UInt64)
    case dismiss(OpeningID)
    case handOver
    case campaign

    init(_ call: HostCall) {
        switch call {
        case .present(let opening, _, let revision, _): self = .present(opening, revision: revision)
        case .update(let opening, _, let revision): self = .update(opening, revision: revision)
        case .dismiss(let opening): self = .dismiss(opening)
        case .handOver: self = .handOver
        case .showInAppCampaign: self = .campaign
        }
    }
}

/// Everything the engine machine can ask the actor to do. The actor executes these in order
/// and decides nothing; what it learns comes back as events.
///
/// The cases with large payloads (a request, a host call) are `indirect`: every action is as
/// large as its largest case, and the frequent ones — a log line, a completion, tracking — are
/// small (265 bytes an action before, most of it copied around for nothing).
enum EngineAction: Hashable, Sendable {
    /// Send a Gravity request; its answer comes back under the same ID.
    indirect case sendGravity(RequestID, GravityCall, identityEpoch: UInt64)
    /// Tell the outbox who a queued record raised before any identity was known leaves as
    /// (DL7), and whether it goes alone as the session's first request (B8): its answer is then
    /// reported back as `queuedOpenerFinished`.
    case answerOwner(UInt64, GravityUser, identityEpoch: UInt64, opens: Bool)
    /// Keep an `/event` that waits at the session gate (B8, DL2): a process ended
    /// before the gate opens leaves it to the next engine. When it goes, `sendGravity` under
    /// the same ID replaces what was kept.
    indirect case keepAtGate(RequestID, GravityCall, identityEpoch: UInt64)
    /// The request kept at the gate will never go (its caller was cancelled, the queue was
    /// cleared): forget what was kept.
    case forgetKeptAtGate(RequestID)
    /// Send a Shopping API request; its answer comes back under the same ID.
    indirect case sendShopping(RequestID, ShoppingCall)
    /// Stop waiting for a request (it may still complete on the server).
    case cancelRequest(RequestID)
    /// Start a deadline.
    case startTimer(TimerID, after: Duration)
    /// Drop a deadline that no longer matters.
    case cancelTimer(TimerID)
    /// Queue a lifecycle event or tracking URLs for delivery, bound to who and where (AN1–AN9).
    case track(TrackingJobs)
    /// Start a host callback now, outside the engine's ordering (H1); its return comes back
    /// as `hostCallFinished(id)`.
    indirect case callHost(HostCallID, HostCall)
    /// Tell the lock listener who holds the presentation lock now (B6).
    case notifyLocks(PresentationLocks)
    /// Persist the SDK-managed uid (`nil` forgets it) (B3).
    case persistUID(String?)
    /// Tell the app's uid listener the canonical uid changed (B14).
    case notifyUserId(String?)
    /// Save the current dialog in the dialog store, replacing what it held (D18).
    indirect case storeDialog(StoredDialog)
    /// Empty the dialog store (D20).
    case forgetStoredDialog
    /// Resume the caller parked under `CallID` with `CallResult`.
    case complete(CallID, CallResult)
    /// The call completes with `.done` the moment the `/event` it sends next is kept (DL5), from
    /// wherever the keeping ends, without waiting for the machine to hear of it; a `complete`
    /// of it afterwards changes nothing, one before it is its result.
    case completeWhenKept(CallID)
    /// Write a line to the engine's logger (built only if the logger takes it).
    case log(AssistantLogLevel, LogLine)
    /// The engine is shut down (H2): stop every request and deadline; nothing more will be
    /// asked of the actor.
    case stopEverything
}

/// A line for the engine's logger, as the machine decided it. Most are text; a line on a hot
/// path (a product action, reported many times a second) keeps its parts, and is only spelled
/// out if the logger's level lets it through.
enum LogLine: Hashable, Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    case text(String)
    /// `product <action> <ref>: <result>`.
    case productAction(AssistantProductAction, AssistantProductRef, AssistantInteractionResult)

    init(stringLiteral value: String) { self = .text(value) }
    init(stringInterpolation: DefaultStringInterpolation) {
        self = .text(String(stringInterpolation: stringInterpolation))
    }

    /// The line as the logger prints it.
    var description: String {
        switch self {
        case .text(let text): return text
        case .productAction(let action, let ref, let result):
            return "product \(action.rawValue) \(ref): \(result.rawValue)"
        }
    }

    /// Whether the line says `part` (for tests that look for one).
    func contains(_ part: String) -> Bool { description.contains(part) }
}
