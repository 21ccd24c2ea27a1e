// MARK: - The public API: each call is an event of the machine

extension AssistantEngine {
    // MARK: Preparation (P1–P8, C1–C8, G1, S4)

    /// Prepares the assistant's start screen for this page (P1–P5).
    ///
    /// The latest call wins: an earlier call still in flight returns `.superseded` (P2). The
    /// timeout covers everything, including waiting for the canonical uid (P3, S4). Cancelling
    /// the calling task returns `.cancelled` (P4). It never calls `trackView` (E4) and never
    /// sends a message to the Shopping API (C8).
    public func prepareAssistant(
        assistantSelector: String, pageContext: PageContext, timeout: Duration = .seconds(10)
    ) async -> AssistantPrepareResult {
        let result = await call(refusal: .prepare(.cancelled)) {
            $0.prepareCalled($1, selector: assistantSelector, page: pageContext, timeout: timeout)
        }
        guard case .prepare(let outcome) = result else {
            preconditionFailure("prepareAssistant completed with \(result)")
        }
        return outcome
    }

    // MARK: Opening and closing (O1–O9)

    /// Presents the chat on `presenter` (O1–O4). The assistant takes its own presentation
    /// lock first and releases it only once the chat is fully closed (O5, O6). Returns once the
    /// presenter has shown the chat — from inside a host callback, as soon as the chat opens
    /// (H1); a cancelled caller returns at once with the outcome.
    public func openAssistant(presenter: any AssistantPresenter) async -> AssistantOpenResult {
        let shown = machine.presentation.shownOpening
        let alive = shown.map { presenters[$0]?.presenter != nil } ?? true
        let availability = presenter.availability
        let handler = self.handler
        let result = await call(refusal: .open(.notReady), offering: presenter) {
            $0.openCalled($1, presenter: availability, presenterAlive: alive) { handler?.canHandle($0) ?? false }
        }
        guard case .open(let outcome) = result else { preconditionFailure("openAssistant completed with \(result)") }
        return outcome
    }

    /// Closes the chat (O5) and returns once it is closed and what waited for the close has been
    /// handed over — from inside a host callback, or once cancelled, at once, the close going on
    /// (H1). A message already sent is not cancelled (O8, D12).
    public func closeAssistant() async {
        _ = await call { $0.closeCalled($1) }
    }

    /// The presenter dismissed the chat by itself (the mobile "Back"), or is going away (O5).
    /// Returns at once: the chat is closed; queued hand-overs follow by themselves.
    public func assistantWasDismissed() async {
        _ = await call { $0.dismissedByPresenter($1) }
    }

    // MARK: Dialog (D1–D17)

    /// Sends a message in the current dialog, or starts a dialog from the latest ready
    /// preparation (D14). Returns the message ID, or why it was refused; refused text is the
    /// caller's to keep. The reply arrives in later snapshots; `waitForReply()` awaits it.
    @discardableResult
    public func sendMessage(_ text: String) async -> Result<String, AssistantSendRefusal> {
        let messageId = makeUUID().lowercasedString
        let threadId = makeUUID().lowercasedString  // D15: fresh per dialog, never `ses`
        return sendResult(
            await call(refusal: .send(.failure(.notReady))) {
                $0.sendCalled($1, text: text, messageId: messageId, newThreadId: threadId)
            })
    }

    /// Sends a start-screen or reply suggest as the user's message (C7).
    @discardableResult
    public func sendSuggest(at index: Int) async -> Result<String, AssistantSendRefusal> {
        let messageId = makeUUID().lowercasedString
        let threadId = makeUUID().lowercasedString
        return sendResult(
            await call(refusal: .send(.failure(.notReady))) {
                $0.suggestCalled($1, index: index, messageId: messageId, newThreadId: threadId)
            })
    }

    /// Sends a failed message again with the same ID and the same bytes (D6). After an
    /// uncertain outcome the server may process it twice: there is no exactly-once promise (D7).
    @discardableResult
    public func retryMessage(id messageId: String) async -> Result<String, AssistantSendRefusal> {
        sendResult(await call(refusal: .send(.failure(.notReady))) { $0.retryCalled($1, messageId: messageId) })
    }

    private func sendResult(_ result: CallResult) -> Result<String, AssistantSendRefusal> {
        guard case .send(let outcome) = result else { preconditionFailure("a send completed with \(result)") }
        return outcome
    }

    /// "New chat": a fresh dialog on the latest ready start screen (D13, D16).
    public func startNewChat() async {
        _ = await call { $0.newChatCalled($1) }
    }

    /// Rates a reply once, by its assistant message ID (D11), or says why it cannot.
    @discardableResult
    public func rateReply(assistantMessageId: String, rating: AssistantRating) async -> AssistantRatingResult {
        let result = await call(refusal: .rating(.unknownReply)) {
            $0.rateCalled($1, assistantMessageId: assistantMessageId, rating: rating)
        }
        guard case .rating(let outcome) = result else { preconditionFailure("rateReply completed with \(result)") }
        return outcome
    }

    /// Suspends until no message is in flight and an open presenter has been given the
    /// outcome (from inside a host callback: until no message is in flight, H1). Cancelling the
    /// waiting task returns at once and does not cancel the message (O8, D12).
    public func waitForReply() async {
        _ = await call { $0.waitForReplyCalled($1) }
    }

    // MARK: Products and reply actions (PR1–PR10, AC1–AC6)

    /// Reports a visible impression or a tap of a product card (PR4).
    ///
    /// An accepted tap queues click tracking, closes the chat, and only after the close
    /// completed calls the handler with `.openProduct` exactly once (PR10). This call returns
    /// when that is done — from inside a host callback, or once cancelled, at once with
    /// `.accepted`, the close and hand-over going on (H1). An impression waits for nothing.
    public func performAssistantProductAction(
        product ref: AssistantProductRef, action: AssistantProductAction
    ) async -> AssistantInteractionResult {
        return interactionResult(
            await call(refusal: .interaction(.staleReference)) { $0.productActionCalled($1, ref: ref, action: action) })
    }

    /// Presses reply button `index` of the reply `assistantMessageId` (AC1–AC6): closes the
    /// chat, then hands the action to the handler once. No product tracking is sent (AC6).
    public func performReplyButton(assistantMessageId: String, index: Int) async -> AssistantInteractionResult {
        interactionResult(
            await call(refusal: .interaction(.staleReference)) {
                $0.replyButtonPressed($1, assistantMessageId: assistantMessageId, index: index)
            })
    }

    private func interactionResult(_ result: CallResult) -> AssistantInteractionResult {
        guard case .interaction(let outcome) = result else { preconditionFailure("an action completed with \(result)") }
        return outcome
    }

    /// Renders a block with the registered builder; `nil` (and a logged error) when the
    /// builder answers a zero or unbounded height (PR3).
    public func renderProductBlock(_ block: AssistantProductBlock, layout: AssistantProductLayout) -> (
        any AssistantProductBlockRendering
    )? {
        guard let builder else { return nil }
        let rendering = builder.build(block: block, layout: layout)
        guard EngineMachine.acceptsBlockHeight(rendering.height) else {
            logger.log(.error, "product block builder returned an invalid height \(rendering.height)")
            return nil
        }
        return rendering
    }

    // MARK: Base SDK subset (B3–B7)

    /// Reports a page view: `POST /visit` (B5). The assistant never calls it itself (E4).
    /// Returns once the answer is handled and its in-app campaigns, if any, are shown (B6) —
    /// from inside a host callback, or once cancelled, without waiting for the campaigns (H1).
    public func trackView(pageContext: PageContext) async {
        _ = await call { $0.trackViewCalled($1, page: pageContext) }
    }

    /// Reports a page view as `trackView` does, but returns as soon as it is on its way, and
    /// calls `finished` when `trackView` would return: a screen flow that must not wait for
    /// the page view (E5) still reports it before anything else it asks of the engine, so what
    /// it sends has one order.
    package func beginTrackView(pageContext: PageContext, finished: @escaping @Sendable () -> Void) {
        let id = begin(refusal: .done) { $0.trackViewCalled($1, page: pageContext) }
        spawn {
            _ = await self.result(of: id)
            finished()
        }
    }

    /// Reports what the shopper did: `POST /event` (B5) with the seed's typed events — a
    /// purchase, a cart change, a sign-in, an event of the app's own (B10), any mix in one call:
    ///
    /// ```swift
    /// await engine.triggerEvent(
    ///     events: [PurchaseEvent(uniqueTransactionId: "ORDER-1001", value: 3580, cart: [
    ///         CartItem(productId: "sku-123", quantity: 1, itemPrice: 1990),
    ///         CartItem(productId: "sku-555", quantity: 1, itemPrice: 1590),
    ///     ], currency: "RUB")],
    ///     pageContext: PageContext(type: .cart, data: ["sku-123", "sku-555"], location: "app://cart"))
    /// ```
    ///
    /// An event missing what the seed requires (an empty `productId` or `uniqueTransactionId`,
    /// an empty purchase cart, a quantity below one, a negative or non-finite amount) is not
    /// sent, and the engine's logger says why at `.error`; the call's other events are. Returns
    /// once the events are kept in the delivery store (DL5), so that a process ended right after
    /// loses none of them; the request may still be on its way, and the in-app campaigns its
    /// answer brings are shown when it comes (B6). With the queue disabled (DL4) nothing is
    /// kept, and it returns once the answer is handled and its campaigns are shown — from
    /// inside a host callback, or once cancelled, without waiting for the campaigns (H1).
    public func triggerEvent(events: [any TriggerEvent], pageContext: PageContext) async {
        _ = await call { $0.triggerEventCalled($1, events: events, page: pageContext) }
    }

    /// Tells the engine whether the shopper allows push notifications, for campaigns that
    /// target it (B11): every Gravity request decided from now on carries it as
    /// `device.permission`, the engine's own lifecycle events included. Until called, the
    /// engine sends `unknown`, as the SDKs do.
    public func setNotificationPermissionStatus(_ status: NotificationPermissionStatus) {
        handle { $0.notificationPermissionSet(status) }
    }

    /// Reports an impression, a visible impression or a close of a content the host renders
    /// itself (B12): the engine requests the tracking URLs the content's `events` carry for
    /// it, each once. The engine reports nothing by itself for such content. An engagement
    /// with a content from before an identity change is not sent (the logger says so).
    public func sendContentEngagement(_ engagement: any ContentEngagement) {
        handle { $0.contentEngagementCalled(engagement) }
    }

    /// Reports a click or a visible impression of a product card of a widget the host renders
    /// itself (B12): the engine requests the tracking URLs the slot's `events` carry for it,
    /// each once. Report a click before navigating. An engagement with a content from before
    /// an identity change is not sent.
    public func sendProductEngagement(_ engagement: any ProductEngagement) {
        handle { $0.productEngagementCalled(engagement) }
    }

    /// Content of a selector: `POST /choose` (B5), holding only the entries of `selector`.
    /// `nil` on a network or decoding error, which is logged. A successful answer starts
    /// content load tracking for its contents (B7). Never blocked by a presentation lock (B6).
    ///
    /// Calls made at the same moment — a screen's entry button and its widgets, from tasks of
    /// their own — leave as one `/choose` with one item per selector, and identical ones share
    /// one answer (B16); each still returns exactly what a call of its own would. A call with no
    /// company is not held back: it leaves as soon as the engine has taken the calls already
    /// waiting for it.
    public func getContentBySelector(selector: String, pageContext: PageContext) async -> ContentResponse? {
        let result = await call(refusal: .content(nil)) { $0.contentCalled($1, selector: selector, page: pageContext) }
        guard case .content(let content) = result else {
            preconditionFailure("getContentBySelector completed with \(result)")
        }
        return content
    }

    /// Replaces the `options` and `data[].options` of the following Gravity requests, like the
    /// base SDK's `setOptions` (the proxy URL is the configuration's `gravityBaseURL`).
    public func setOptions(_ options: GravityOptions, contentSettings: GravityContentSettings? = nil) {
        handle { $0.optionsSet(options, contentSettings: contentSettings) }
    }

    /// Switches to manual identity mode (B3): the app's id travels as `user.custom`. Another
    /// user id is an identity change: the chat closes (as the old user, AN3), the dialog ends,
    /// the start screen must be prepared again (D13, D17).
    public func setUser(userId: String, sessionId: String? = nil) async {
        _ = await call { $0.setUserCalled($1, userId: userId, sessionId: sessionId) }
    }

    /// The uid Gravity knows this shopper by, for an app that links it to its own records
    /// (B14): at once when it is known; while the first answer of a fresh session is on its
    /// way, once that answer came (or failed); `nil` when none is known.
    public func getUserId() async -> String? {
        guard
            case .userId(let uid) = await call(
                refusal: .userId(machine.identity.canonicalUID), { $0.userIdRequested($1) })
        else { return nil }
        return uid
    }

    /// Tells `listener` of every change of the uid from now on (B14): a new uid once, never the
    /// same one twice in a row, and `nil` when the identity is reset. The listener runs in the
    /// engine's order and must not block; it may call the engine from a task of its own (H1).
    /// `nil` removes it.
    public func setUserIdListener(_ listener: (@Sendable (String?) -> Void)?) {
        userIdListener = listener
    }

    /// Makes `uid`, which the app kept elsewhere (another install, its own backend), the
    /// shopper's SDK-managed identity (B14): the custom user of `setUser` is dropped, no session
    /// is known, and the next Gravity requests wait for the first answer (B8). An identity
    /// change like `resetIdentity()`, unless `uid` is the current one. An empty `uid` is refused.
    /// An identity store that refuses to write `uid` costs no identity: the engine goes on with
    /// it in memory and writes it again when Gravity answers with it (B14).
    public func restoreUserId(_ uid: String) async throws(AssistantError) {
        guard !uid.isEmpty else {
            throw AssistantError(code: .invalidConfiguration, message: "restoreUserId: the uid is empty")
        }
        _ = await call { $0.userIdRestoreCalled($1, uid: uid) }
    }

    /// Forgets the SDK-managed uid and starts as a new anonymous visitor: an identity change.
    public func resetIdentity() async {
        _ = await call { $0.resetIdentityCalled($1) }
    }

    /// Takes the app's presentation lock (B6). Idempotent and not counted.
    public func lockPresentation() {
        handle { $0.appLockChanged(locked: true) }
    }

    /// Releases the app's presentation lock (B6). The assistant's own lock is unaffected (O6).
    public func unlockPresentation() {
        handle { $0.appLockChanged(locked: false) }
    }

    /// Called on every change of who holds the presentation lock (B6), synchronously from the
    /// engine: keep it short. It may call the engine back from a task it starts (H1).
    public func setPresentationLockListener(_ listener: (@Sendable (PresentationLocks) -> Void)?) {
        lockListener = listener
    }

    /// Receives auto-shown in-app campaigns, one at a time, in the order they arrived. While
    /// any presentation lock is held they are dropped, not queued (B6, O7). A campaign is only
    /// for the moment and the user its answer came for (B15): none from an answer that came
    /// after its call's deadline, none whose `delayTime` ends later than that deadline plus the
    /// delay (it waited behind others), none of a user that was replaced while its answer was on
    /// its way or it waited. The handler may call and await any engine method (H1).
    public func setInAppCampaignHandler(_ handler: (@Sendable (InAppCampaign) async -> Void)?) {
        inAppCampaignHandler = handler
    }
}
