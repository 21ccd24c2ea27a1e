/// Whether the shopper lets the app send push notifications, as the app last told the engine
/// with ``AssistantEngine/setNotificationPermissionStatus(_:)`` (B11). Campaigns may target
/// it; every Gravity request carries it as `device.permission`, spelled as the SDKs spell it.
public enum NotificationPermissionStatus: String, Sendable, Hashable, CaseIterable {
    /// The shopper allowed notifications.
    case granted
    /// The shopper refused them.
    case denied
    /// The app has not asked, or does not know; what the engine sends until told otherwise.
    case unknown
}
