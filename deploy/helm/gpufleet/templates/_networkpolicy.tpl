{{- /*
NetworkPolicy peers shared by the components' policies (networkpolicy.yaml of each).

gpufleet.netpol.monitoring: the pods of networkPolicy.monitoringNamespaces
(matched by the kubernetes.io/metadata.name label every namespace has) and
the addresses in networkPolicy.nodeCIDRs (host-network clients: a
Prometheus on the host network, the API aggregator and kube-scheduler on
control-plane hosts).  The kubelet's probes need neither: traffic from the
node a pod runs on is always admitted by NetworkPolicy.  Empty strings
(--set networkPolicy.monitoringNamespaces={} gives [""]) are skipped.
*/ -}}
{{- define "gpufleet.netpol.monitoring" -}}
{{- range .Values.networkPolicy.monitoringNamespaces }}{{ if . }}
- namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: {{ . | quote }}
{{- end }}{{ end }}
{{- include "gpufleet.netpol.nodes" . }}
{{- end -}}

{{- define "gpufleet.netpol.nodes" -}}
{{- range .Values.networkPolicy.nodeCIDRs }}{{ if . }}
- ipBlock:
    cidr: {{ . | quote }}
{{- end }}{{ end }}
{{- end -}}
