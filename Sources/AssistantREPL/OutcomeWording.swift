import ShoppingAssistant

/// How the REPL words what the engine reports: plain language first, the engine's own code
/// after it in parentheses, so a reader understands the line and can still search for the code
/// (`rate limited — try again in 30 s (rate_limited)`). One place, so every command and the
/// chat screen say the same thing the same way.
enum OutcomeWording {
    // MARK: - Errors

    /// What went wrong, in words, with the error's code: `the server failed, HTTP 500 (server)`.
    /// `retryIn` is how long a rate limit still asks to wait, when it said.
    static func failure(_ error: AssistantError, retryIn: Duration? = nil) -> String {
        "\(plain(error, retryIn: retryIn)) (\(error.code.rawValue))"
    }

    /// Whether sending the same message again can succeed without anything changing first: not
    /// when the key or the network is refused, the setup is wrong, or the ID is taken.
    static func offersRetry(_ error: AssistantError) -> Bool {
        switch error.code {
        case .unauthorized, .invalidConfiguration, .messageConflict: return false
        case .timeout, .network, .server, .rateLimited, .invalidResponse, .historyUnavailable: return true
        }
    }

    private static func plain(_ error: AssistantError, retryIn: Duration?) -> String {
        switch error.code {
        case .rateLimited:
            guard let wait = retryIn ?? error.retryAfter, wait > .zero else { return "rate limited" }
            return "rate limited — try again in \(seconds(wait)) s"
        case .unauthorized:
            if error.message.contains("IP_NOT_ALLOWED") {
                return "this network is not allowed to use the service, HTTP \(error.httpStatus ?? 403)"
            }
            return "not authorized: check the API key" + (error.httpStatus.map { ", HTTP \($0)" } ?? "")
        case .timeout: return "no answer in time"
        case .network:
            return error.message.hasPrefix("connection lost")
                ? "the connection broke before the answer came" : "the service could not be reached"
        case .server: return "the server failed" + (error.httpStatus.map { ", HTTP \($0)" } ?? "")
        case .invalidResponse: return "the server's answer could not be read"
        case .messageConflict: return "the server has another message with this ID"
        case .historyUnavailable: return "the chat's history is gone on the server (the messages here are kept)"
        case .invalidConfiguration: return "the assistant is not set up correctly"
        }
    }

    /// Whole seconds, rounded up: a wait of 0.2 s still reads "1 s".
    static func seconds(_ duration: Duration) -> Int64 {
        let (whole, fraction) = duration.components
        return whole + (fraction > 0 ? 1 : 0)
    }

    // MARK: - Results

    /// A refused send, in words.
    static func refusal(_ refusal: AssistantSendRefusal) -> String {
        switch refusal {
        case .busy: return "a message is already on its way"
        case .notReady: return "the assistant is not prepared"
        case .emptyText: return "empty message"
        case .notRetryable: return "nothing to retry"
        case .noIdentity: return "the user id is not known yet"
        case .noSuchSuggest: return "there is no such suggest on screen"
        }
    }

    /// A product action or reply button the engine did not accept, with its result's name.
    static func ignored(_ result: AssistantInteractionResult, what: String) -> String {
        let reason: String
        switch result {
        case .accepted: return "\(what): accepted"
        case .duplicate: reason = "it is being handled already"
        case .staleReference: reason = "it is from a chat that is gone"
        case .notActionable: reason = what.hasPrefix("button") ? "it is not available" : "it cannot be opened"
        }
        return "\(what) ignored: \(reason) (\(result.rawValue))"
    }

    /// An `openAssistant` that did not open the chat.
    static func open(_ result: AssistantOpenResult) -> String {
        switch result {
        case .opened: return "the chat is open (opened)"
        case .alreadyOpen: return "the chat is open already (alreadyOpen)"
        case .notReady: return "the chat cannot open: the assistant is not prepared (notReady)"
        case .invalidPresenter: return "the chat cannot open: the chat screen cannot show it (invalidPresenter)"
        }
    }

    /// A preparation's outcome: `ready`, or why not, with the code.
    static func prepare(_ result: AssistantPrepareResult) -> String {
        switch result {
        case .ready: return "ready"
        case .unavailable(.disabled): return "switched off by its campaign (disabled)"
        case .unavailable(.notFound): return "no such assistant (notFound)"
        case .failure(let error): return "failed: " + failure(error)
        case .cancelled: return "cancelled"
        case .superseded: return "superseded by a newer call"
        }
    }
}
