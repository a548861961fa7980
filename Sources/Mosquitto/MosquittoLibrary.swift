import CMosquitto

/// libmosquitto's functions, initialised once (`mosquitto_lib_init`) on first use.
enum MosquittoLibrary {
    /// The functions, the library initialised.
    static let api: notifybus_mosquitto_api = {
        var api = notifybus_mosquitto_api()
        notifybus_mosquitto_fill(&api)
        _ = api.lib_init?()
        return api
    }()
}
