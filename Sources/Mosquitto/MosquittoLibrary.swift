import CMosquitto

/// libmosquitto, loaded on first use (`dlopen` of `libmosquitto.so.1`) and initialised once
/// (`mosquitto_lib_init`): a program that never makes an MQTT client never maps it, nor the
/// libssl and libcrypto it brings.
public enum MosquittoLibrary {
    /// The shared library's name, as Debian's libmosquitto1 installs it.
    public static let name = "libmosquitto.so.1"

    /// The loaded functions, or why they could not be loaded.
    static let loaded: Result<notifybus_mosquitto_api, MosquittoError> = {
        var api = notifybus_mosquitto_api()
        if let failure = notifybus_mosquitto_load(name, &api) {
            let reason = "cannot load \(name) (Debian/Ubuntu: libmosquitto1): \(String(cString: failure))"
            return .failure(MosquittoError(operation: "dlopen", code: Int32(MOSQ_ERR_NOT_SUPPORTED.rawValue), reason: reason))
        }
        // Every field is set: notifybus_mosquitto_load returns an error for any it cannot find.
        _ = api.lib_init?()
        return .success(api)
    }()

    /// Loads the library if it is not loaded yet.
    /// - Throws: `MosquittoError` saying why it cannot be loaded (not installed, say).
    public static func load() throws(MosquittoError) {
        _ = try loaded.get()
    }

    /// The loaded functions.
    static func api() throws(MosquittoError) -> notifybus_mosquitto_api {
        try loaded.get()
    }
}
