import Foundation
import Testing

@testable import ShoppingAssistant

/// The base SDK's e-commerce calls, on the machine: typed events (B10), the push-permission
/// status (B11) and the engagement of manually rendered content (B12).
@Suite struct EngineMachineCommerceTests {
    private typealias F = MachineFixtures

    private static let cart = [
        CartItem(productId: "sku-123", quantity: 1, itemPrice: 1990),
        CartItem(productId: "sku-555", quantity: 2, itemPrice: 795.5),
    ]

    /// The events of the `/event` request `actions` send, if they send one.
    private static func sentEvents(_ actions: [EngineAction]) -> [GravityEvent]? {
        for action in actions {
            if case .sendGravity(_, .event(let events, _), _) = action { return events }
        }
        return nil
    }

    private static func errors(_ actions: [EngineAction]) -> [String] {
        actions.compactMap { if case .log(.error, let line) = $0 { line.description } else { nil } }
    }

    // MARK: - B10

    // covers: B10
    @Test func typedEventsOfOneCallGoInOneEventRequestInTheirOrder() {
        var machine = F.machine()
        let addToCart = AddToCartEvent(value: 1990, productId: "sku-123", quantity: 1, currency: "RUB")
        let purchase = PurchaseEvent(uniqueTransactionId: "ORDER-1001", value: 3581, cart: Self.cart, currency: "RUB")
        let custom = CustomEvent(type: "survey-completed-v1", name: "Survey Completed", customProps: ["score": "9"])
        let actions = machine.triggerEventCalled(F.call(1), events: [addToCart, purchase, custom], page: F.page)
        #expect(
            F.withoutGravityDeadlines(actions) == [
                .completeWhenKept(F.call(1)),  // DL5: returns once its events are kept
                .sendGravity(
                    .host(F.call(1)),
                    .event([addToCart.wire.stamped(), purchase.wire.stamped(), custom.wire.stamped()], F.envelope()),
                    identityEpoch: 1),
            ])
        #expect(addToCart.wire.type == "add-to-cart-v1")
        #expect(addToCart.wire.fields["cart"] == nil, "an optional field without a value is left out")
        #expect(purchase.wire.fields["value"] == .amount(Decimal(3581)))
    }

    // What the seed requires and the caller left empty is refused with an error line that says
    // what, and never sent half-made; the call's other events still go.
    // covers: B10
    @Test func anEventMissingWhatTheSeedRequiresIsRefusedAndTheOthersStillGo() {
        let good = AddToWishlistEvent(value: 1990, productId: "sku-123")
        let refused: [(any TriggerEvent, String)] = [
            (
                AddToCartEvent(value: 1990, productId: "", quantity: 1),
                "add-to-cart-v1 refused, not sent: productId is empty"
            ),
            (
                AddToCartEvent(value: 1990, productId: "sku-1", quantity: -1),
                "add-to-cart-v1 refused, not sent: quantity is -1, not a positive number of units"
            ),
            (RemoveFromCartEvent(value: 10, productId: "sku-1", quantity: 0), "quantity is 0"),
            (
                AddToCartEvent(value: EventAmount(Double.nan), productId: "sku-1", quantity: 1),
                "value is not a finite number"
            ),
            (SyncCartEvent(value: EventAmount(-Double.infinity)), "value is not a finite number"),
            (AddToWishlistEvent(value: -5, productId: "sku-1"), "value is negative (-5)"),
            (
                PurchaseEvent(uniqueTransactionId: "ORDER-1", value: 0, cart: []),
                "purchase-v1 refused, not sent: cart is empty"
            ),
            (PurchaseEvent(uniqueTransactionId: "", value: 1990, cart: Self.cart), "uniqueTransactionId is empty"),
            (
                PurchaseEvent(
                    uniqueTransactionId: "ORDER-2", value: 1990,
                    cart: [Self.cart[0], CartItem(productId: "", quantity: 1, itemPrice: 5)]),
                "cart[1].productId is empty"
            ),
            (
                SyncCartEvent(value: 10, cart: [CartItem(productId: "sku-1", quantity: 1, itemPrice: -1)]),
                "cart[0].itemPrice is negative (-1)"
            ),
            (CustomEvent(type: "", name: "Nameless"), "type is empty"),
            (CustomEvent(type: "x-v1", name: ""), "name is empty"),
        ]
        for (event, reason) in refused {
            var machine = F.machine()
            let actions = machine.triggerEventCalled(F.call(1), events: [event, good], page: F.page)
            #expect(Self.errors(actions).count == 1, "\(event)")
            #expect(Self.errors(actions).first?.contains(reason) == true, "\(Self.errors(actions)) says \(reason)")
            #expect(Self.sentEvents(actions) == [good.wire.stamped()], "only the complete event goes: \(event)")
        }
    }

    // covers: B10
    @Test func aCallWhoseEventsAreAllRefusedSendsNothingAndReturns() {
        var machine = F.machine()
        let actions = machine.triggerEventCalled(
            F.call(1), events: [PurchaseEvent(uniqueTransactionId: "ORDER-1", value: 10, cart: [])], page: F.page)
        #expect(Self.sentEvents(actions) == nil)
        #expect(F.completions(actions) == [.complete(F.call(1), .done)])
        #expect(machine.hostRequests.isEmpty)
        #expect(machine.gravityInFlight.isEmpty)
    }

    private struct ForeignEvent: TriggerEvent {
        var type: String { "foreign-v1" }
        var name: String { "Foreign" }
    }

    // The engine cannot know the fields of a type of the host's own: it says so and sends the
    // rest.
    // covers: B10
    @Test func anEventOfAForeignTypeIsRefusedWithALogLine() {
        var machine = F.machine()
        let good = LoginEvent(cuid: "hash", cuidType: "phone_hash")
        let actions = machine.triggerEventCalled(F.call(1), events: [ForeignEvent(), good], page: F.page)
        #expect(Self.errors(actions).count == 1)
        #expect(Self.errors(actions).first?.contains("ForeignEvent (foreign-v1) is not one of the engine's") == true)
        #expect(Self.sentEvents(actions) == [good.wire.stamped()])
    }

    // covers: B10
    @Test func amountsAreTheDecimalsWrittenAndOptionalFieldsAreLeftOut() {
        #expect(EventAmount(19.99).decimal == Decimal(string: "19.99"))
        #expect(EventAmount(floatLiteral: 1990.1).decimal == Decimal(string: "1990.1"))
        #expect(EventAmount(Decimal(string: "3580.10")!).description == "3580.1")
        let login = LoginEvent(cuid: "hash")
        #expect(login.wire.fields == ["cuid": .text("hash")])
        #expect(SignUpEvent().wire.fields == [:])
        #expect(CustomEvent(type: "t", name: "T").wire.fields == [:])
        let cartEvent = SyncCartEvent(value: 0, cart: [])
        #expect(cartEvent.wire.fields == ["value": .amount(0), "cart": .cart([])], "an emptied cart is a cart")
    }

    // MARK: - B11

    // covers: B11
    @Test func thePermissionSetIsWhatEveryLaterRequestCarriesLifecycleEventsIncluded() throws {
        var machine = F.machine()
        F.prepareReady(&machine)
        #expect(machine.notificationPermissionSet(.granted) == [])
        var granted = F.envelope()
        granted.permission = .granted
        #expect(
            F.withoutGravityDeadlines(machine.trackViewCalled(F.call(1), page: F.page))
                == [.sendGravity(.host(F.call(1)), .visit(granted), identityEpoch: 1)])
        let opened = try F.open(&machine)  // chat_dialog_open: the chat is presented
        let opening = F.trackedJobs(opened).compactMap { job -> GravityClient.Envelope? in
            if case .event(_, let envelope, _) = job { envelope } else { nil }
        }
        #expect(opening.map(\.permission) == [.granted], "chat_dialog_open carries it too")
        _ = machine.gravityAnswered(
            .host(F.call(1)),
            .campaigns(.success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "uid-1", ses: "s-1")))),
            identityEpoch: 1)
        _ = machine.notificationPermissionSet(.denied)
        let content = F.contentAlone(&machine, F.call(2), selector: "entry")
        let sent = content.compactMap { action -> GravityClient.Envelope? in
            if case .sendGravity(_, .choose(_, _, let envelope), _) = action { envelope } else { nil }
        }
        #expect(sent.map(\.permission) == [.denied], "\(content)")
    }

    // The status is part of what a request is when it is decided, as its user and page are: a
    // request waiting at the session gate (B8) goes with the status of its call.
    // covers: B11, B8
    @Test func aRequestWaitingAtTheSessionGateKeepsThePermissionOfItsCall() {
        var machine = F.machine(storedUID: nil)
        _ = machine.trackViewCalled(F.call(1), page: F.page)
        F.contentAlone(&machine, F.call(2), selector: "entry")  // waits at the gate
        _ = machine.notificationPermissionSet(.granted)
        let answered = machine.gravityAnswered(
            .host(F.call(1)),
            .campaigns(.success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "u-9", ses: "s-9")))),
            identityEpoch: 1)
        let released = answered.compactMap { action -> GravityClient.Envelope? in
            if case .sendGravity(_, .choose(_, _, let envelope), _) = action { envelope } else { nil }
        }
        #expect(released.map(\.permission) == [.unknown])
        #expect(released.map(\.user) == [GravityUser(uid: "u-9", ses: "s-9")], "its user is the session's")
    }

    // MARK: - B12

    private static let slot = Slot(
        item: ["sku": "KIT-1001", "name": "Термокружка", "price": 1990], strId: 1, slotId: "s-1",
        events: [
            ProductEvent(type: "visible_impression", urls: ["https://t.example/w/vi?s=1"]),
            ProductEvent(
                type: "click", urls: ["https://t.example/w/c?s=1", "https://t.example/w/c?s=1", "javascript:alert(1)"]),
            ProductEvent(type: "click", urls: ["https://t2.example/w/c?s=1"]),
        ])

    private static let widget = CampaignContent(
        contentId: "ct-w", contentType: "products", deliveryMethod: "inline", custom: nil,
        events: [
            ContentEvent(type: "load", urls: ["https://t.example/w/l"]),
            ContentEvent(type: "impression", urls: ["https://t.example/w/i", "https://t.example/w/i"]),
            ContentEvent(type: "visible_impression", urls: ["https://t.example/w/vi"]),
            ContentEvent(type: "close", urls: ["https://t.example/w/x"]),
            ContentEvent(type: "click", urls: ["https://t.example/w/click", "https://t.example/w/click"]),
        ],
        variables: [
            "onLoad": ["action": "load"], "onImpression": ["action": "impression"],
            "onVisibleImpression": ["action": "visible_impression"], "onClose": ["action": "close"],
        ],
        products: Products(strategyId: "popular", slots: [slot]))

    /// `getContentBySelector` of the widget, answered for the stored-uid user.
    private static func widgetAnswer(_ machine: inout EngineMachine, call: CallID = F.call(1)) throws
        -> (Campaign, CampaignContent)
    {
        F.contentAlone(&machine, call, selector: "widget")
        let response = ContentResponse(data: [
            Campaign(
                selector: "widget",
                payload: [
                    CampaignVariation(
                        campaignId: "c-w", experienceId: nil, variationId: nil, decisionId: "d-w", contents: [widget])
                ])
        ])
        let actions = machine.gravityAnswered(.host(call), .content(F.answered(response)), identityEpoch: 1)
        let contents = actions.compactMap { action -> ContentResponse? in
            if case .complete(_, .content(let content?)) = action { content } else { nil }
        }
        let content = try #require(contents.first)
        let campaign = try #require(content.data.first)
        return (campaign, try #require(campaign.payload.first?.contents.first))
    }

    // As the SDKs' ContentEventService: the content's `variables.onImpression` (and
    // `onVisibleImpression`, `onClose`) name which of its `events` to request; each URL once.
    // covers: B12
    @Test func aContentEngagementRequestsTheURLsOfTheEventTypeItsVariablesName() throws {
        var machine = F.machine()
        let (campaign, content) = try Self.widgetAnswer(&machine)
        let user = GravityUser(uid: "uid-1")
        #expect(
            machine.contentEngagementCalled(ContentImpressionEngagement(content: content, campaign: campaign)) == [
                .track([.url("https://t.example/w/i", user: user)])
            ])
        #expect(
            machine.contentEngagementCalled(ContentVisibleImpressionEngagement(content: content, campaign: campaign))
                == [.track([.url("https://t.example/w/vi", user: user)])])
        #expect(
            machine.contentEngagementCalled(ContentCloseEngagement(content: content, campaign: campaign)) == [
                .track([.url("https://t.example/w/x", user: user)])
            ])
        // A content whose variables name no impression has none to send (the SDKs send none).
        let bare = CampaignContent(
            contentId: "ct-b", contentType: nil, deliveryMethod: nil, custom: nil, events: content.events)
        #expect(
            F.withoutLogs(
                machine.contentEngagementCalled(ContentImpressionEngagement(content: bare, campaign: campaign)))
                == [])
    }

    // As the vendor's newest SDK: a click requests the content's `click` events, each URL
    // once, whatever its variables say; an action the SDK does not know fires nothing, so an
    // `onImpression` whose action is `click` is no click.
    // covers: B12, AN5
    @Test func aContentClickRequestsTheClickEventsAndAnUnknownActionFiresNothing() throws {
        var machine = F.machine()
        let (campaign, content) = try Self.widgetAnswer(&machine)
        #expect(
            machine.contentEngagementCalled(ContentClickEngagement(content: content, campaign: campaign)) == [
                .track([.url("https://t.example/w/click", user: GravityUser(uid: "uid-1"))])
            ])
        let clickAsImpression = CampaignContent(
            contentId: "ct-c", contentType: nil, deliveryMethod: nil, custom: nil, events: content.events,
            variables: ["onImpression": ["action": "click"], "onClose": ["action": "unknown"]])
        for engagement in [
            ContentImpressionEngagement(content: clickAsImpression, campaign: campaign) as any ContentEngagement,
            ContentCloseEngagement(content: clickAsImpression, campaign: campaign),
        ] {
            #expect(F.withoutLogs(machine.contentEngagementCalled(engagement)) == [], "\(engagement)")
        }
        let noClick = CampaignContent(
            contentId: "ct-n", contentType: nil, deliveryMethod: nil, custom: nil,
            events: content.events.filter { $0.type != "click" })
        #expect(
            F.withoutLogs(machine.contentEngagementCalled(ContentClickEngagement(content: noClick, campaign: campaign)))
                == [])
    }

    // covers: B12, AN5
    @Test func aProductEngagementRequestsTheSlotsURLsOfItsTypeEachValidOneOnce() throws {
        var machine = F.machine()
        let (campaign, content) = try Self.widgetAnswer(&machine)
        let slot = try #require(content.products?.slots?.first)
        let user = GravityUser(uid: "uid-1")
        #expect(
            machine.productEngagementCalled(ProductClickEngagement(slot: slot, content: content, campaign: campaign))
                == [
                    .track([
                        .url("https://t.example/w/c?s=1", user: user), .url("https://t2.example/w/c?s=1", user: user),
                    ])
                ])
        #expect(
            machine.productEngagementCalled(
                ProductVisibleImpressionEngagement(slot: slot, content: content, campaign: campaign))
                == [.track([.url("https://t.example/w/vi?s=1", user: user)])])
        let untracked = Slot(item: ["sku": "KIT-1002"])
        #expect(
            F.withoutLogs(
                machine.productEngagementCalled(
                    ProductClickEngagement(slot: untracked, content: content, campaign: campaign))) == [])
    }

    // A content is bound to the identity of the answer it came in (AN3): after an identity
    // change its engagement is not sent, so it never counts for the new user. One the host
    // built itself has no answer and goes as the current user.
    // covers: B12, AN3
    @Test func anEngagementWithAContentFromBeforeAnIdentityChangeIsNotSent() throws {
        var machine = F.machine()
        let (campaign, content) = try Self.widgetAnswer(&machine)
        _ = machine.setUserCalled(F.call(2), userId: "crm-42", sessionId: "crm-s")
        let stale = machine.contentEngagementCalled(ContentImpressionEngagement(content: content, campaign: campaign))
        #expect(F.trackedURLs(stale) == [])
        #expect(
            stale.contains {
                if case .log(.info, let line) = $0 { line.contains("before an identity change") } else { false }
            })
        let slot = try #require(content.products?.slots?.first)
        #expect(
            F.trackedURLs(
                machine.productEngagementCalled(
                    ProductClickEngagement(slot: slot, content: content, campaign: campaign)))
                == [])
        #expect(
            machine.contentEngagementCalled(ContentImpressionEngagement(content: Self.widget, campaign: campaign)) == [
                .track([.url("https://t.example/w/i", user: GravityUser(custom: "crm-42", ses: "crm-s"))])
            ])
    }

    private struct ForeignEngagement: ContentEngagement {
        let content: CampaignContent
        let campaign: Campaign
    }

    // covers: B12
    @Test func anEngagementOfAForeignTypeIsRefusedWithALogLine() throws {
        var machine = F.machine()
        let (campaign, content) = try Self.widgetAnswer(&machine)
        let actions = machine.contentEngagementCalled(ForeignEngagement(content: content, campaign: campaign))
        #expect(F.trackedURLs(actions) == [])
        #expect(Self.errors(actions).first?.contains("ForeignEngagement is not one of the engine's") == true)
    }
}
