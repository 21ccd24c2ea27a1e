import Foundation

// MARK: - Base SDK subset (B3–B6)

extension AssistantEngine {
    /// Reports a page view: `POST /visit` (B5). The assistant never calls it itself (E4).
    public func trackView(pageContext: PageContext) async {
        let epoch = identity.epoch
        let result = await gravity.visit(envelope: envelope(pageContext))
        if case .failure(.failed(let error, _)) = result {
            logger.log(.error, "gravity POST /visit (trackView) failed: \(error)")
        }
        await absorbEventResponse(result, epoch: epoch)
    }

    /// Sends custom events: `POST /event` (B5).
    public func triggerEvent(events: [CustomEvent], pageContext: PageContext) async {
        let epoch = identity.epoch
        let wire = events.map { GravityCustomEvent(type: $0.type, name: $0.name, customProps: $0.customProps) }
        let result = await gravity.event(wire, envelope: envelope(pageContext))
        if case .failure(.failed(let error, _)) = result {
            logger.log(.error, "gravity POST /event (triggerEvent) failed: \(error)")
        }
        await absorbEventResponse(result, epoch: epoch)
    }

    /// Content of a selector: `POST /choose` (B5), holding only the entries of `selector`. `nil`
    /// on a network or decoding error, which is logged. A successful answer starts content load
    /// tracking for its contents (B7). Never blocked by a presentation lock (B6).
    public func getContentBySelector(selector: String, pageContext: PageContext) async -> ContentResponse? {
        let epoch = identity.epoch
        switch await gravity.choose(selector: selector, settings: contentSettings, envelope: envelope(pageContext)) {
        case .success(let answer):
            absorb(answer.user, epoch: epoch)
            trackContentLoad(answer.value, epoch: epoch)
            return answer.value
        case .failure(.cancelled):
            return nil
        case .failure(.failed(let error, _)):
            logger.log(.error, "gravity POST /choose (getContentBySelector \(selector)) failed: \(error)")
            return nil
        }
    }

    /// Replaces the `options` and `data[].options` of the following Gravity requests, like the
    /// base SDK's `setOptions` (the proxy URL is the configuration's `gravityBaseURL`).
    public func setOptions(_ options: GravityOptions, contentSettings: GravityContentSettings? = nil) {
        gravityOptions = options
        if let contentSettings { self.contentSettings = contentSettings }
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

    /// The user, page (with the SDK attributes) and options a Gravity request made now carries.
    func envelope(_ pageContext: PageContext, user: GravityUser? = nil) -> GravityClient.Envelope {
        GravityClient.Envelope(user: user ?? identity.wire, context: sdkContext(pageContext), options: gravityOptions)
    }

    /// Content load tracking (B7): requests the load URLs of every content, as the identity the
    /// content was fetched for; nothing is shown and nothing waits.
    func trackContentLoad(_ content: ContentResponse, epoch: UInt64) {
        guard epoch == identity.epoch else { return }
        enqueueURLs(content.loadTrackingURLs)
    }

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
    ) async {
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
    func absorb(_ user: GravityAnsweredUser?, epoch: UInt64) {
        let outcome = identity.absorb(user, epoch: epoch)
        if let uid = outcome.persist { identityStore.saveUID(uid) }
        if outcome.resolved { runPreparation(preparation.identityResolved()) }
    }

    private func identityDidChange(previous: GravityUser) async {
        logger.log(.info, "identity changed")
        // The old dialog's end is reported as the old user (AN3).
        await endDialog(.identityChange, identity: previous)
        runPreparation(preparation.identityChanged())
        latestReady = nil
        await closeChat(reason: "identity change")  // if it was reopened meanwhile
    }
}
