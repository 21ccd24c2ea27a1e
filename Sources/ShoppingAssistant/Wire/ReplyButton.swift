import Foundation

/// A reply button (`ui.buttons[*]`), routed once when the reply was decoded (AC3) and kept
/// compact: the route, the label, and the server's object as text, which becomes the action's
/// payload unchanged (AC2) when the button is shown.
struct ReplyButton: Sendable, Hashable {
    /// Where the button leads, decided from `action` (and `url` for `follow_url`).
    enum Route: Sendable, Hashable {
        case supportChat
        /// A valid http(s) URL (`HTTPURLValidator`).
        case followURL(StoredText)
        /// Any other action name, passed to the host as `.custom`.
        case custom(StoredText)
        /// Never offered: an empty action, or `follow_url` without a valid http(s) URL. Kept so
        /// that the engine can say why in its log.
        case notOffered
    }

    private let storage: ReplyStorage
    let route: Route
    private let actionText: StoredText
    private let valueText: StoredText
    private let objectText: StoredText

    init(storage: ReplyStorage, route: Route, action: StoredText, value: StoredText, object: StoredText) {
        self.storage = storage
        self.route = route
        actionText = action
        valueText = value
        objectText = object
    }

    /// The action name as the server sent it.
    var actionName: String { storage.text(actionText) ?? "" }

    /// The label: `value`, or the action's name when there is none.
    var title: String { storage.text(valueText) ?? actionName }

    /// The server's button object, keys as received; decoded on each read and not kept (a
    /// few small members, read when the reply lands and when a snapshot shows it).
    var payload: [String: JSONValue] { storage.uncachedObject(objectText) }

    /// Runs `body` over the server's button object, as bytes: equal objects make equal actions
    /// (AC2, AC3).
    func withObject<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        storage.withBytes(objectText) { body(UnsafeRawBufferPointer($0)) }
    }

    /// The host's action, or `nil` for a button that is not offered (AC3). The same as
    /// `AssistantAction(button: payload)`.
    var action: AssistantAction? {
        switch route {
        case .supportChat:
            return .openSupportChat(payload: payload)
        case .followURL(let text):
            return storage.text(text).flatMap { URL(string: $0) }.map { .followUrl($0) }
        case .custom(let text):
            return .custom(type: storage.text(text) ?? "", payload: payload)
        case .notOffered:
            return nil
        }
    }

    /// Routes an action name and URL as AC3 says; `url` is only read for `follow_url`.
    static func route(
        action: StoredText, url: StoredText, in builder: ReplyStorageBuilder
    ) -> Route {
        builder.withBytes(action) { name in
            if name.isEmpty { return .notOffered }
            if name.elementsEqual("follow_url".utf8) {
                guard !url.isAbsent, builder.withBytes(url, HTTPURLValidator.isValid) else { return .notOffered }
                return .followURL(url)
            }
            if name.elementsEqual("open_support_chat".utf8) { return .supportChat }
            return .custom(action)
        }
    }

    static func == (lhs: ReplyButton, rhs: ReplyButton) -> Bool {
        if lhs.storage === rhs.storage, lhs.route == rhs.route, lhs.actionText == rhs.actionText,
            lhs.valueText == rhs.valueText, lhs.objectText == rhs.objectText
        {
            return true
        }
        return lhs.title == rhs.title && lhs.action == rhs.action && lhs.actionName == rhs.actionName
            && lhs.payload == rhs.payload
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(actionName)
        hasher.combine(title)
    }
}
