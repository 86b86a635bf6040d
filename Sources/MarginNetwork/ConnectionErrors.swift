import AsyncHTTPClient
import Foundation

/// Whether a connection failed because the server's TLS certificate isn't trusted.
func isTLSFailure(_ error: any Error) -> Bool {
    let text = String(reflecting: error)
    return text.contains("NIOSSL") || text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("handshakeFailed")
        || text.contains("certificate")
}

/// Whether a connection error will be the same on a second try: redirects that loop or go on
/// too long, a host name that doesn't resolve.
func isPermanent(_ error: any Error) -> Bool {
    if let error = error as? HTTPClientError, error == .redirectCycleDetected || error == .redirectLimitReached {
        return true
    }
    return describe(error) == "the host name could not be resolved"
}

/// A short, human description of a connection error.
func describe(_ error: any Error) -> String {
    if isTLSFailure(error) {
        let text = String(reflecting: error)
        if text.contains("self signed") || text.contains("self-signed") || text.contains("SELF_SIGNED") {
            return "the server's TLS certificate is self-signed, so it can't be trusted"
        }
        if text.contains("expired") || text.contains("EXPIRED") { return "the server's TLS certificate has expired" }
        if text.contains("hostname") || text.contains("HOSTNAME") || text.contains("unableToValidateCertificate") {
            return "the server's TLS certificate is not valid for this host name"
        }
        return "the TLS handshake failed: the server's certificate is not trusted"
    }
    if let error = error as? HTTPClientError {
        switch error {
        case .redirectCycleDetected: return "the server's redirects form a loop"
        case .redirectLimitReached: return "more than 10 redirects"
        case .connectTimeout: return "the connection timed out"
        case .readTimeout: return "the server stopped sending data (read timeout)"
        case .remoteConnectionClosed: return "the server closed the connection"
        default: return "\(error)"
        }
    }
    let text = "\(error)"
    if text.contains("connection refused") || text.contains("Connection refused") {
        return "connection refused"
    }
    if text.lowercased().contains("dns") || text.contains("getaddrinfo") || text.contains("resolve") {
        return "the host name could not be resolved"
    }
    return text
}
