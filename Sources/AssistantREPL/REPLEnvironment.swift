import DemoStore
import Foundation
import ShoppingAssistant
import ShoppingAssistantCurl

/// Everything a REPL session runs on — engine, transport, clock, identity store, ID source
/// and the session itself — built in one place from a few policy decisions. The `assistant`
/// executable and the transcript replayer both build their sessions here, so a transcript
/// replays against exactly the wiring it was recorded with.
///
/// What a tool around the REPL (a recording, a replay) needs, it gets through three hooks and
/// no knowledge of the REPL's insides: it wraps the transport (`Policy.wrapTransport`), observes
/// the output (`REPLOutput.setObserver`), and drives the steps and the clock
/// (`REPLSession.stepper`, `time`), or hears of each step of the read loop
/// (`REPLStepObserver`).
package struct REPLEnvironment: Sendable {
    /// Who answers the engine's requests.
    package enum Backend: Sendable {
        /// The built-in demo store, at the transport seam.
        case demoStore
        /// Real services over libcurl (`CurlTransport`): a malformed answer is an error, never
        /// the end of the session.
        case services
        /// A transport of the caller's, such as a transcript's replay.
        case transport(any HTTPTransport)
    }

    /// What the clock is.
    package enum Time: Sendable {
        /// The continuous clock.
        case real
        /// A clock of the caller's, treated as real time: nothing waits for quiescence (a
        /// terminal session's test drives a manual clock, or none at all).
        case clock(any Clock<Duration>)
        /// Virtual time: the clock jumps to the next deadline whenever nothing can run.
        case virtual(VirtualTime)
    }

    /// Where the SDK-managed uid lives.
    package enum Identity: Sendable, Hashable {
        /// In memory, starting with `uid` (nil: a first launch).
        case memory(uid: String?)
        /// In a file, across sessions.
        case file(URL)
    }

    /// Where the delivery queue (DL2) lives.
    package enum Delivery: Sendable, Hashable {
        /// In memory, the session's own: gone when the process ends, kept across `:restart`.
        case memory
        /// In journals in a directory (`FileDeliveryStore`), across sessions.
        case directory(URL)
    }

    /// Where the current dialog (D18) lives.
    package enum Dialog: Sendable, Hashable {
        /// In memory, the session's own: gone when the process ends, kept across `:restart`.
        case memory
        /// In a file (`FileDialogStore`), across sessions.
        case file(URL)
    }

    /// How thread and message IDs are made.
    package enum IDs: Sendable, Hashable {
        case random
        /// 1, 2, 3…: the same input prints the same bytes.
        case sequential
    }

    /// The decisions a session is built from.
    package struct Policy: Sendable {
        package var configuration: AssistantEngineConfiguration
        package var backend: Backend
        package var time: Time
        package var identity: Identity
        package var delivery: Delivery
        /// Where the dialog survives a restart (D18).
        package var dialog: Dialog = .memory
        /// Forget the stored dialog before the first engine starts (`--new-chat`).
        package var startsNewChat = false
        /// Where the demo store keeps its threads across runs (`DemoStore.keepThreads`); `nil`
        /// keeps them in memory.
        package var demoThreads: URL?
        package var ids: IDs
        package var settings: REPLSettings
        /// Puts a transport of the caller's in front of the backend (a recording's); it sees
        /// every request the engine sends and every answer or fault it gets.
        package var wrapTransport: TransportWrapper?
        /// A replay: `:fault` only prints, the transcript's answers carry the fault.
        package var replaying = false

        package init(
            configuration: AssistantEngineConfiguration, backend: Backend, time: Time, identity: Identity,
            delivery: Delivery = .memory, dialog: Dialog = .memory, startsNewChat: Bool = false,
            demoThreads: URL? = nil, ids: IDs,
            settings: REPLSettings, wrapTransport: TransportWrapper? = nil, replaying: Bool = false
        ) {
            self.configuration = configuration
            self.backend = backend
            self.time = time
            self.identity = identity
            self.delivery = delivery
            self.dialog = dialog
            self.startsNewChat = startsNewChat
            self.demoThreads = demoThreads
            self.ids = ids
            self.settings = settings
            self.wrapTransport = wrapTransport
            self.replaying = replaying
        }
    }

    /// A transport put in front of another (`Policy.wrapTransport`).
    package struct TransportWrapper: Sendable {
        package let wrap: @Sendable (any HTTPTransport) -> any HTTPTransport

        package init(_ wrap: @escaping @Sendable (any HTTPTransport) -> any HTTPTransport) {
            self.wrap = wrap
        }
    }

    /// What this environment was built from.
    package let policy: Policy
    /// The session's engine now: a new one after each `:restart`.
    package var engine: AssistantEngine { session.engine }
    /// The demo store when the backend is the demo store.
    package let demoStore: DemoStore?
    /// What the engine sends through: the backend, wrapped as the policy asks, behind the
    /// session's network switch (`:offline`).
    package let transport: any HTTPTransport
    /// `:offline` and `:online` turn it.
    package let network: NetworkSwitch
    package let clock: any Clock<Duration>
    /// Virtual time, when the clock is virtual.
    package let time: VirtualTime?
    /// This session's hold on its conversation file, for as long as it lives.
    let dialogClaim: DialogFileClaim?
    package let identityStore: any IdentityStore
    /// Where the first engine's delivery queue lives (an engine after `:restart` opens the
    /// same place: the same instance in memory, the same directory on disk).
    package let deliveryStore: any DeliveryStore
    /// Where the dialog lives (D18): every engine of the session, after `:restart` too, keeps
    /// its dialog there.
    package let dialogStore: any DialogStore
    /// The wall clock events are stamped with (DL6): on virtual time, `virtualEpoch` plus the
    /// time the session's clock has moved, so a replay stamps what its recording stamped.
    package let wallClock: @Sendable () -> Date
    /// The REPL core, with the engine's builder, handler and listeners registered.
    package let session: REPLSession

    /// Builds everything `policy` asks for; the session prints to `output`.
    package init(policy: Policy, output: REPLOutput) async {
        self.policy = policy
        switch policy.time {
        case .real:
            time = nil
            clock = ContinuousClock()
        case .clock(let given):
            time = nil
            clock = given
        case .virtual(let virtual):
            time = virtual
            clock = virtual.clock
        }
        let backend: any HTTPTransport
        switch policy.backend {
        case .demoStore:
            let store = DemoStore(clock: clock, activity: time?.activity)
            if let threads = policy.demoThreads { store.keepThreads(in: threads) }  // the same server
            demoStore = store
            // On virtual time its answers wait their turn, one at a time (`HeldRequests`).
            backend = time.map { HeldTransport(inner: store, requests: $0.requests) } ?? store
        case .services:
            demoStore = nil
            backend = CurlTransport()
        case .transport(let transport):
            demoStore = nil
            backend = transport
        }
        switch policy.identity {
        case .memory(let uid): identityStore = InMemoryIdentityStore(uid: uid)
        case .file(let url): identityStore = FileIdentityStore(fileURL: url)
        }
        let network = NetworkSwitch()
        self.network = network
        transport = OfflineTransport(
            inner: policy.wrapTransport?.wrap(backend) ?? backend, network: network, held: time?.requests)
        let makeDeliveryStore: @Sendable () -> any DeliveryStore
        switch policy.delivery {
        case .memory:
            let store = InMemoryDeliveryStore()
            makeDeliveryStore = { store }
        case .directory(let url):
            // A closed file store is done: the next engine opens the directory anew.
            makeDeliveryStore = { FileDeliveryStore(directory: url) }
        }
        let dialogStore: any DialogStore
        var dialogClaim: DialogFileClaim?
        switch policy.dialog {
        case .memory: dialogStore = InMemoryDialogStore()
        case .file(let url):
            dialogStore = FileDialogStore(fileURL: url)
            dialogClaim = DialogFileClaim(url)
        }
        if policy.startsNewChat { try? dialogStore.removeDialog() }  // `--new-chat`
        self.dialogStore = dialogStore
        let wallClock: @Sendable () -> Date
        if let virtualClock = time?.clock {
            wallClock = { Self.virtualEpoch.addingTimeInterval(Self.seconds(virtualClock.now.offset)) }
        } else {
            wallClock = { Date() }
        }
        self.wallClock = wallClock
        let uuid: @Sendable () -> UUID
        switch policy.ids {
        case .random:
            uuid = { RandomUUIDs.next() }
        case .sequential:
            let generator = SequentialUUIDs()
            uuid = { generator.next() }
        }
        // The logger prints from the start, fitted to the width: an identity store's warning
        // while the engine loads the uid (a corrupt file set aside) must not be lost before the
        // session exists (which then fits lines to the chat's width as it changes).
        let startWidth = policy.settings.width
        output.fitLines { startWidth }
        let logger = AssistantLogger(level: policy.configuration.logLevel) { level, message in
            output.log(level, message)
        }
        // On virtual time the queue's pauses are the same on every run (DL3's jitter).
        let deliverySeed: UInt64? = time == nil ? nil : Self.virtualDeliverySeed
        let (configuration, engineTransport, engineClock, engineIdentity) = (
            policy.configuration, self.transport, self.clock, self.identityStore
        )
        let activity = time?.activity
        let makeEngine: @Sendable (AssistantLogger, any DeliveryStore) -> AssistantEngine = { logger, store in
            AssistantEngine(
                configuration: configuration, transport: engineTransport, clock: engineClock,
                identityStore: engineIdentity, uuid: uuid, logger: logger, deliveryStore: store,
                dialogStore: dialogStore, wallClock: wallClock, deliverySeed: deliverySeed, activity: activity)
        }
        let deliveryStore = makeDeliveryStore()
        self.deliveryStore = deliveryStore
        let engine = makeEngine(logger, deliveryStore)
        // `:restart`: a new engine on the same stores, transport and clock, as after a process
        // restart; its logger prints as the first one's does.
        let restart: @Sendable () -> AssistantEngine = {
            let logger = AssistantLogger(level: configuration.logLevel) { level, message in
                output.log(level, message)
            }
            return makeEngine(logger, makeDeliveryStore())
        }
        // On real time, a session that waits for each command counts impression time only
        // while a command runs, as virtual time does: its recording replays.
        let stepClock = time == nil && !policy.settings.interactive ? StepClock(base: clock) : nil
        session = await REPLSession(
            engine: engine, demoStore: demoStore, output: output, settings: policy.settings, clock: clock, time: time,
            stepClock: stepClock, replaying: policy.replaying, uuid: uuid, network: network, wallClock: wallClock,
            restart: restart)
        self.dialogClaim = dialogClaim
        if case .directory = policy.delivery { await session.keepQueueOnDisk() }
        if dialogClaim?.isShared == true { await session.noteAtStart(DialogFileClaim.sharedWarning) }
    }

    /// Where the wall clock of a session on virtual time starts: every piped demo session and
    /// every replay stamps its events from here.
    package static let virtualEpoch = Date(timeIntervalSince1970: 1_796_551_200)  // 2026-12-06T10:00:00Z

    /// The delivery queue's seed on virtual time.
    package static let virtualDeliverySeed: UInt64 = 0x5EED

    private static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

// MARK: - The two policies

extension REPLEnvironment.Policy {
    /// The REPL is the host app: `device.ua` names it (`assistant/0.1.0 (Linux)`), and its version
    /// is the package's, with which it ships.
    package static let appName = "assistant"

    /// The `assistant` command's session. With no service URL it runs on the demo store, as a
    /// fresh visitor with sequential IDs; piped or recorded, it runs on virtual time, so two
    /// runs print the same bytes, a 120 s timeout takes no wall time, and a session recorded
    /// in a terminal is the one a pipe would record. An unrecorded terminal session, or live
    /// services, run on real time, and live services keep the identity in `stateDirectory`.
    ///
    /// The delivery queue lives in `stateDirectory` (`outbox`) in a terminal or with an explicit
    /// `--state-dir`, on the demo store too: quitting and starting again is a real restart, and
    /// what was queued leaves. A piped session without `--state-dir` keeps it in memory, so what
    /// it prints never depends on a queue an earlier run left behind; a recording always does,
    /// as its transcript replays on a store of its own.
    ///
    /// A recorded session waits for each command like a piped one (it replays step by step)
    /// but, in a terminal, does not echo the input the line editor already shows.
    ///
    /// `terminalWidth` is the terminal's own width when `width` came from `--width`: the chat
    /// goes back to it on `:width auto`. A recording leaves it out, as it follows no resize:
    /// a transcript knows only its `%width`.
    package static func commandLine(
        _ options: CommandLineOptions, interactive: Bool, width: Int, terminalWidth: Int? = nil,
        stateDirectory: StateDirectory?
    ) -> Self {
        let demo = options.usesDemoStore
        let recording = options.recordPath != nil
        // What outlives the process (D18, DL2): in a terminal or with an explicit --state-dir;
        // a piped session never depends on what an earlier run left, nor a recording.
        let keepsState = !recording && (interactive || options.stateDirectory != nil)
        return Self(
            configuration: AssistantEngineConfiguration(
                apiKey: options.apiKey ?? (demo ? "demo-key" : ""), section: options.section,
                gravityBaseURL: options.gravityURL, shoppingBaseURL: options.shoppingURL, logLevel: options.logLevel,
                appName: Self.appName, appVersion: AssistantEngineConfiguration.sdkVersion),
            backend: demo ? .demoStore : .services,
            time: demo && (!interactive || recording) ? .virtual(VirtualTime()) : .real,
            identity: demo
                ? (keepsState ? stateDirectory.map { .file($0.demoIdentityFile) } : nil) ?? .memory(uid: nil)
                : stateDirectory.map { .file($0.identityFile) } ?? .memory(uid: nil),
            delivery: keepsState ? stateDirectory.map { .directory($0.outboxDirectory) } ?? .memory : .memory,
            dialog: keepsState ? stateDirectory.map { .file($0.dialogFile) } ?? .memory : .memory,
            startsNewChat: options.newChat,
            demoThreads: demo && keepsState ? stateDirectory?.demoThreadsFile : nil,
            // A demo store kept across runs has the earlier runs' IDs: new ones must not repeat them.
            ids: demo && !(keepsState && stateDirectory != nil) ? .sequential : .random,
            settings: REPLSettings(
                width: width, terminalWidth: recording ? nil : terminalWidth, entrySelector: options.entrySelector,
                assistantSelector: options.assistantSelector, interactive: interactive && !recording,
                echoesInput: !interactive))
    }
}
