import CMosquitto

// A new client's settings, applied to the C object before it connects: protocol version,
// credentials, TLS, will, and MQTT 5's CONNECT properties.

extension MosquittoClient {
    /// Applies `configuration` to the new client. Wraps `mosquitto_int_option`,
    /// `mosquitto_username_pw_set`, `mosquitto_tls_set` and `mosquitto_will_set`.
    func apply(_ configuration: MosquittoConfiguration) throws(MosquittoError) {
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check("mosquitto_int_option", mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, version))
        if let username = configuration.username {
            try check("mosquitto_username_pw_set", mosquitto_username_pw_set(handle, username, configuration.password))
        }
        if let tls = configuration.tls {
            if tls.caFile == nil {
                try check("mosquitto_int_option", mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1))
            }
            // With no CA file, libmosquitto wants a directory: the system's store is loaded above.
            let directory = tls.caFile == nil ? "/etc/ssl/certs" : nil
            try check(
                "mosquitto_tls_set", mosquitto_tls_set(handle, tls.caFile, directory, tls.certFile, tls.keyFile, nil))
        }
        if let will = configuration.will {
            let code = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos, will.retain)
            }
            try check("mosquitto_will_set", code)
        }
        if configuration.protocolVersion == .v5 {
            try setConnectProperties()
        }
    }

    /// MQTT 5's CONNECT properties: a Session Expiry Interval (a session outlives the connection
    /// only with one) and the Maximum Packet Size the broker may send. `mosquitto_connect_async`
    /// takes no properties, but `mosquitto_connect_bind_v5` stores its properties for every later
    /// connection before it looks at its arguments: called with port -1, it stores them and
    /// returns `MOSQ_ERR_INVAL` without connecting.
    private func setConnectProperties() throws(MosquittoError) {
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if !configuration.cleanSession {
            let seconds = UInt32(clamping: max(0, configuration.sessionExpiry.components.seconds))
            try check(
                "mosquitto_property_add_int32",
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), seconds))
        }
        if let maximum = configuration.maximumPacketSize {
            try check(
                "mosquitto_property_add_int32",
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), UInt32(clamping: maximum)))
        }
        guard properties != nil else { return }
        let code = mosquitto_connect_bind_v5(handle, configuration.host, -1, Int32(configuration.keepalive), nil, properties)
        guard code == Int32(MOSQ_ERR_INVAL.rawValue) else {
            throw MosquittoError(operation: "mosquitto_connect_bind_v5", code: code)
        }
    }

    private func check(_ operation: String, _ code: Int32) throws(MosquittoError) {
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else { throw MosquittoError(operation: operation, code: code) }
    }
}
