import CLibcurl
import CLibcurlShim
import Foundation

/// libcurl with nothing around it, for `assistant-bench`'s floor: one easy handle, reused,
/// `curl_easy_perform` on the calling thread, the body collected into one buffer. No thread,
/// no continuation, no deadline, no bound: what an HTTP POST costs at the least on this
/// machine. Not for production (it blocks its caller and trusts the server).
package final class CurlBareClient {
    private let easy: UnsafeMutableRawPointer?
    private let headers: UnsafeMutablePointer<curl_slist>?
    private let url: String
    private let sink = BareClientSink()

    /// A client that POSTs JSON to `url`.
    package init(url: URL) {
        CurlGlobal.initialize()
        self.url = url.absoluteString
        easy = curl_easy_init()
        var list = curl_slist_append(nil, "Content-Type: application/json")
        list = curl_slist_append(list, "Accept: application/json")
        list = curl_slist_append(list, "Expect:")
        headers = list
        guard let easy else { return }
        _ = cst_easy_set_string(easy, CURLOPT_URL, self.url)
        _ = cst_easy_set_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = cst_easy_set_list(easy, CURLOPT_HTTPHEADER, headers)
        _ = cst_easy_set_data_function(easy, CURLOPT_WRITEFUNCTION, bareClientWrite)
        _ = cst_easy_set_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(sink).toOpaque())
    }

    deinit {
        if let easy { curl_easy_cleanup(easy) }
        curl_slist_free_all(headers)
    }

    /// POSTs `body` and returns the status and the answer's body, or `nil` on any failure.
    package func post(_ body: Data) -> (status: Int, body: Data)? {
        guard let easy else { return nil }
        sink.body = Data()
        let code = body.withUnsafeBytes { bytes -> CURLcode in
            _ = cst_easy_set_long(easy, CURLOPT_POST, 1)
            _ = cst_easy_set_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
            _ = cst_easy_set_pointer(easy, CURLOPT_POSTFIELDS, bytes.baseAddress)
            return curl_easy_perform(easy)
        }
        guard code == CURLE_OK else { return nil }
        var status = 0
        _ = cst_easy_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return (status, sink.body)
    }
}

/// Where the bare client's write callback puts the body.
private final class BareClientSink {
    var body = Data()
}

private let bareClientWrite: cst_data_function = { bytes, size, count, context in
    guard let context else { return 0 }
    let sink = Unmanaged<BareClientSink>.fromOpaque(context).takeUnretainedValue()
    sink.body.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: size * count))
    return size * count
}
