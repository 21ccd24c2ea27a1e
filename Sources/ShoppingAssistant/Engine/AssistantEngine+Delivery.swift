import Foundation

// MARK: - Handing requests to the outbox (DL2)

extension AssistantEngine {
    /// Lifecycle events and tracking URLs leave through the outbox, each on its route: events
    /// one at a time in order, URLs a few at once (B13).
    func track(_ jobs: TrackingJobs) {
        var events: [(DeliveryRecord, Outbox.Detail)] = []
        var urls: [(DeliveryRecord, Outbox.Detail)] = []
        let now = wallClock()
        for job in jobs {
            switch job {
            case .event(let event, let envelope, let epoch):
                events.append(
                    record(
                        .event, target: "event", body: gravity.eventBody([GravityEvent(event)], envelope: envelope),
                        label: event.type, user: envelope.user, now: now,
                        detail: Outbox.Detail(
                            kind: .event, name: event.type, user: envelope.user, properties: event.customProps,
                            eventTime: event.eventTime, identityEpoch: epoch)))
            case .url(let url, let user):
                let string = url.string
                urls.append(
                    record(
                        .tracking, target: string, body: nil, label: string, user: user, now: now,
                        detail: Outbox.Detail(
                            kind: .url, name: string, user: user, properties: [:], eventTime: nil, identityEpoch: nil)))
            }
        }
        outbox.accept(events, route: .lifecycle)
        outbox.accept(urls, route: .tracking)
    }

    /// Calls completing once kept that are still listed: for tests that none outlives its call.
    var keptCompletionCount: Int { calls.keptCompletionCount }

    /// The completion that a host call's record being kept ends, if the machine said so (DL5).
    func keptCompletion(of id: RequestID) -> KeptCompletion? {
        guard case .host(let call) = id else { return nil }
        return calls.keptCompletion(of: call)
    }

    /// Who a queued record raised before any identity was known leaves as (DL7), once the
    /// machine says: at once, or after the session's first request (B8). `nil` once the engine
    /// has stopped.
    func queuedRecordOwner() async -> QueuedOwner? {
        guard !machine.isShutDown else { return nil }  // H2: kept for the next engine
        let owner = ownerRequests.next()
        return await withCheckedContinuation { continuation in
            ownerRequests.add(owner, continuation)
            handle { $0.queuedOwnerAsked(owner) }
            // Not answered at once: it waits for the gate's first answer, parked.
            if ownerRequests.park(owner) { activity?.end() }
        }
    }

    /// Resumes an owner request; one that waited parked counts as runnable work again first.
    func answerOwner(_ owner: UInt64, with answer: QueuedOwner?) {
        guard let (continuation, parked) = ownerRequests.take(owner) else { return }
        if parked { activity?.begin() }
        continuation.resume(returning: answer)
    }

    /// The record a host call's `/visit` or `/event` is kept as, or `nil` for a `/choose`,
    /// which is never queued.
    func deliveryRecord(for request: GravityCall, identityEpoch: UInt64) -> (DeliveryRecord, Outbox.Detail)? {
        let now = wallClock()
        switch request {
        case .choose, .chooseTogether:
            return nil
        case .visit(let envelope):
            return record(
                .visit, target: "visit", body: gravity.visitBody(envelope: envelope), label: "screenview",
                user: envelope.user, now: now,
                detail: Outbox.Detail(
                    kind: .event, name: "screenview", user: envelope.user, properties: [:], eventTime: nil,
                    identityEpoch: identityEpoch))
        case .event(let events, let envelope):
            let types = events.map(\.type).joined(separator: ",")
            var eventTime: String?
            if case .text(let time)? = events.first?.fields["eventTime"] { eventTime = time }
            return record(
                .event, target: "event", body: gravity.eventBody(events, envelope: envelope), label: types,
                user: envelope.user, now: now,
                detail: Outbox.Detail(
                    kind: .event, name: types, user: envelope.user, properties: [:], eventTime: eventTime,
                    identityEpoch: identityEpoch))
        }
    }

    private func record(
        _ kind: DeliveryRecord.Kind, target: String, body: Data?, label: String, user: GravityUser, now: Date,
        detail: Outbox.Detail
    ) -> (DeliveryRecord, Outbox.Detail) {
        (
            DeliveryRecord(
                id: recordIDs.next(), kind: kind, target: target, body: body, createdAt: now, label: label,
                owner: user.uid ?? user.custom),
            detail
        )
    }
}
