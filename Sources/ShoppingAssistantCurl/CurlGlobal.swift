import CLibcurl
import CLibcurlShim

/// libcurl's process-wide set-up (`curl_global_init`), done once before the first handle.
/// libcurl 7.84 and later count the calls and make them thread-safe, so a process that also
/// uses FoundationNetworking (which initialises libcurl too) is fine.
enum CurlGlobal {
    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// Initialises libcurl on the first call; `false` if it could not be.
    @discardableResult
    static func initialize() -> Bool { initialized }
}
