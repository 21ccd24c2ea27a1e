import Foundation

/// A custom event for `triggerEvent` (B5): `{"type", "name", "customProps"}` on the wire.
public struct CustomEvent: Sendable, Hashable {
    public var type: String
    public var name: String
    public var customProps: [String: String]

    public init(type: String, name: String, customProps: [String: String] = [:]) {
        self.type = type
        self.name = name
        self.customProps = customProps
    }
}

// MARK: - Base SDK subset (B3–B6)

extension AssistantEngine {
    /// Reports a page view: `POST /visit` (B5). The assistant never calls it itself (E4).
    public func trackView(pageContext: PageContext) async {
        let epoch = identity.epoch
        let result = await gravity.visit(identity: identity.wire, context: sdkContext(pageContext))
        await absorbEventResponse(result, epoch: epoch)
    }

    /// Sends custom events: `POST /event` (B5).
    public func triggerEvent(events: [CustomEvent], pageContext: PageContext) async {
        let epoch = identity.epoch
        let wire = events.map { GravityCustomEvent(type: $0.type, name: $0.name, customProps: $0.customProps) }
        let result = await gravity.event(wire, identity: identity.wire, context: sdkContext(pageContext))
        await absorbEventResponse(result, epoch: epoch)
    }

    /// Content of a selector: `POST /choose` (B5). `nil` on a network or decoding error, which
    /// is logged. Never blocked by a presentation lock (B6).
    public func getContentBySelector(selector: String, pageContext: PageContext) async -> ContentResponse? {
        let epoch = identity.epoch
        switch await gravity.choose(selector: selector, identity: identity.wire, context: sdkContext(pageContext)) {
        case .success(let answer):
            absorb(answer.user, epoch: epoch)
            return answer.value
        case .failure:
            return nil
        }
    }

    /// Switches to manual identity mode (B3). Another user id is an identity change: the
    /// dialog ends, the chat closes, the start screen must be prepared again (D13, D17).
    public func setUser(userId: String, sessionId: String? = nil) async {
        if identity.isChange(toUser: userId) {
            // The chat closes while the old user is still current, so its close is theirs (AN3).
            await closeChat(reason: "identity change")
        }
        let old = identity.wire
        guard identity.setUser(userId: userId, sessionId: sessionId) else { return }
        await identityDidChange(previous: old)
    }

    /// Forgets the SDK-managed uid and starts as a new anonymous user: an identity change.
    public func resetIdentity() async {
        await closeChat(reason: "identity reset")
        let old = identity.wire
        identity.reset()
        identityStore.saveUID(nil)
        await identityDidChange(previous: old)
    }

    /// Takes the app's presentation lock (B6). Idempotent and not counted.
    public func lockPresentation() {
        runLocks(presentation.lockByApp())
    }

    /// Releases the app's presentation lock (B6). The assistant's own lock is unaffected (O6).
    public func unlockPresentation() {
        runLocks(presentation.unlockByApp())
    }

    /// Called on every lock change, with who holds it now (B6).
    public func setPresentationLockListener(_ listener: (@Sendable (PresentationLocks) -> Void)?) {
        lockListener = listener
    }

    /// Receives auto-shown in-app campaigns. While any presentation lock is held they are
    /// dropped, not queued (B6, O7).
    public func setInAppCampaignHandler(_ handler: (@Sendable (InAppCampaign) async -> Void)?) {
        inAppCampaignHandler = handler
    }

    // MARK: - Internals

    func sdkContext(_ context: PageContext) -> PageContext {
        context.withSDKAttributes(
            appVersion: configuration.appVersion, sdkVersion: AssistantEngineConfiguration.sdkVersion, platform: "linux"
        )
    }

    func runLocks(_ actions: [PresentationMachine.Action]) {
        for case .notifyLocks(let locks) in actions {
            logger.log(.info, "presentation lock: \(locks)")
            lockListener?(locks)
        }
    }

    private func absorbEventResponse(
        _ result: Result<GravityClient.Answer<[InAppCampaign]>, WireFailure>, epoch: UInt64
    )
        async
    {
        guard case .success(let answer) = result else { return }
        absorb(answer.user, epoch: epoch)
        for campaign in answer.value {
            if presentation.locks.isLocked {
                logger.log(
                    .info,
                    "in-app campaign \(campaign.campaignId) suppressed: presentation locked by \(presentation.locks)")
            } else if let inAppCampaignHandler {
                await inAppCampaignHandler(campaign)
            }
        }
    }

    /// Keeps the `user` of a response made under identity `epoch` (B3, S3, S4).
    func absorb(_ user: GravityUser?, epoch: UInt64) {
        let outcome = identity.absorb(user, epoch: epoch)
        if let uid = outcome.persist { identityStore.saveUID(uid) }
        if outcome.resolved { runPreparation(preparation.identityResolved()) }
    }

    private func identityDidChange(previous: GravityIdentity) async {
        logger.log(.info, "identity changed")
        // The old dialog's end is reported as the old user (AN3).
        await endDialog(.identityChange, identity: previous)
        runPreparation(preparation.identityChanged())
        latestReady = nil
        await closeChat(reason: "identity change")  // if it was reopened meanwhile
    }
}
