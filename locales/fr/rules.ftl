# Les alertes : le titre de chaque règle (les mots du guide), le résumé d'une alerte telle que
# DumbMonit la lève, et les annotations de `dumbmonit rules --lang fr`.

severity-critical = Critique
severity-warning = Avertissement
severity-notice = Avis

in-days = { $when ->
    [today] dans moins d’un jour
    [future] dans { $days } { $days ->
        [one] jour
       *[other] jours
    }
   *[past] expiré depuis { $days } { $days ->
        [one] jour
       *[other] jours
    }
}

certificate-what = { $certificate ->
    [serving] Le certificat de service de l’API server
   *[client] Le certificat client avec lequel DumbMonit s’authentifie
}

rule-node-not-ready =
    .title = Nœud Kubernetes non prêt
    .summary = Le nœud { $node } n’est pas prêt
    .prom-summary = Le nœud { $node } n’est pas prêt
    .prom-description = La condition Ready du nœud { $node } est False, Unknown ou absente.
rule-node-pressure =
    .title = Nœud Kubernetes sous pression
    .summary = Le nœud { $node } est sous pression { $condition }
    .prom-summary = Le nœud { $node } est sous pression { $condition }
    .prom-description = Le nœud { $node } signale une pression { $condition }.
rule-pod-crash-looping =
    .title = Pod Kubernetes en boucle de crash
    .summary = Le pod { $namespace }/{ $pod } est en boucle de crash
    .prom-summary = Le pod { $namespace }/{ $pod } est en boucle de crash
    .prom-description = Le pod { $namespace }/{ $pod } a été vu en CrashLoopBackOff dans les 10 dernières minutes, pendant 10 minutes.
rule-pod-pending =
    .title = Pod Kubernetes bloqué en attente
    .summary = Le pod { $namespace }/{ $pod } est en attente
    .prom-summary = Le pod { $namespace }/{ $pod } est en attente
    .prom-description = Le pod { $namespace }/{ $pod } est Pending depuis 15 minutes.
rule-pod-not-ready =
    .title = Pod Kubernetes pas prêt
    .summary = Le pod { $namespace }/{ $pod } n’est pas prêt
    .prom-summary = Le pod { $namespace }/{ $pod } n’est pas prêt
    .prom-description = Le pod { $namespace }/{ $pod }, d’aucun Deployment, StatefulSet, DaemonSet ni Job, n’est pas prêt depuis 15 minutes.
rule-pod-restarting =
    .title = Pod Kubernetes redémarre
    .summary = Le pod { $namespace }/{ $pod } a redémarré { $restarts } fois dans la dernière heure
    .prom-summary = Le pod { $namespace }/{ $pod } a redémarré { $value } fois dans la dernière heure
    .prom-description = Les conteneurs du pod { $namespace }/{ $pod } ont redémarré plus de 5 fois dans la dernière heure, sans boucle de crash.
rule-workload-replicas-missing =
    .title = Workload Kubernetes avec des répliques manquantes
    .summary = { $kind } { $namespace }/{ $workload } : { $missing } { $missing ->
        [one] réplique manquante
       *[other] répliques manquantes
    } sur { $desired }
    .prom-summary = { $kind } { $namespace }/{ $workload } a { $value } réplique(s) indisponible(s)
    .prom-description = { $kind } { $namespace }/{ $workload } a des répliques indisponibles depuis 10 minutes.
    .prom-description-escalated = { $kind } { $namespace }/{ $workload } a des répliques indisponibles depuis plus d’une heure.
rule-pvc-pending =
    .title = Demande de volume Kubernetes en attente
    .summary = La demande de volume { $namespace }/{ $pvc } est bloquée en Pending
    .prom-summary = La demande de volume { $namespace }/{ $pvc } est bloquée en Pending
    .prom-description = La demande de volume { $namespace }/{ $pvc } est Pending alors qu’un pod l’utilise ou qu’un événement Warning la nomme, depuis 15 minutes.
rule-monitor-unreachable =
    .title = Surveillance inaccessible
    .summary = Le cluster { $cluster } ne peut pas être lu
    .prom-summary = Le cluster { $cluster } ne peut pas être lu
    .prom-description = DumbMonit n’a pas pu lire l’API server lors de deux cycles consécutifs.
rule-aggregated-api-unavailable =
    .title = API agrégée Kubernetes indisponible
    .summary = L’APIService { $apiservice } n’est pas disponible
    .prom-summary = L’APIService { $apiservice } n’est pas disponible
    .prom-description = L’API agrégée { $apiservice } n’est plus Available depuis 5 minutes : l’API server ne joint pas le service { $service }. Sa condition : kubectl get apiservice { $apiservice } -o yaml.
rule-hpa-metrics-unavailable =
    .title = HPA Kubernetes sans métriques
    .summary = Le HPA { $namespace }/{ $hpa } ne peut pas mettre à l’échelle : { $reason }
    .prom-summary = Le HPA { $namespace }/{ $hpa } ne peut pas mettre à l’échelle
    .prom-description = Le HPA { $namespace }/{ $hpa } ne peut plus calculer de nombre de répliques depuis 10 minutes (sa condition ScalingActive est False).
rule-certificate-expiring =
    .title = Certificat de l’API server Kubernetes bientôt expiré
    .description = Il est valide jusqu’au { $until }. { $fix ->
        [serving-k3s] k3s renouvelle à son redémarrage les certificats qui expirent dans les 90 jours : redémarrez k3s sur chaque nœud serveur.
        [serving] Renouvelez-le (kubeadm : kubeadm certs renew apiserver, puis redémarrez l’API server).
        [client-k3s] Le certificat du kubeconfig admin de k3s dure un an ; k3s le renouvelle s’il redémarre dans les 90 jours avant son terme : redémarrez k3s, puis copiez le nouveau /etc/rancher/k3s/k3s.yaml.
       *[client] Renouvelez-le, ou lisez plutôt avec un jeton de compte de service (dumbmonit rbac).
    }
    .summary = { certificate-what } expire le { $date } ({ in-days })
    .prom-summary = Le certificat { $certificate } du cluster { $cluster } expire dans { $value }
    .prom-description = Renouvelez-le avant son terme (k3s renouvelle à son redémarrage les certificats qui expirent dans les 90 jours).
rule-version-skew =
    .title = Kubelet Kubernetes hors de l’écart de versions
    .description = Un kubelet peut avoir jusqu’à trois versions mineures de retard sur l’API server, jamais d’avance : mettez le nœud à jour (ou, pour un kubelet plus récent, le control plane d’abord).
    .summary = Le kubelet { $kubelet } du nœud { $node } est hors de l’écart de versions pris en charge avec l’API server { $version }
    .prom-summary = Le kubelet du nœud { $node } est hors de l’écart de versions pris en charge
    .prom-description = Un kubelet peut avoir jusqu’à trois versions mineures de retard sur l’API server, jamais d’avance.
rule-rollout-stuck =
    .title = Déploiement Kubernetes bloqué
    .summary = Le déploiement de { $kind } { $namespace }/{ $workload } est bloqué
    .prom-summary = Le déploiement de { $kind } { $namespace }/{ $workload } est bloqué
    .prom-description = Un Deployment au-delà de son délai de progression, ou une mise à jour de StatefulSet ou de DaemonSet sans progrès depuis 15 minutes.
rule-pod-stuck-terminating =
    .title = Pod Kubernetes bloqué en arrêt
    .summary = Le pod { $namespace }/{ $pod } s’arrête depuis { $minutes } min au-delà de son délai de grâce
    .prom-summary = Le pod { $namespace }/{ $pod } s’arrête depuis { $value } au-delà de son délai de grâce
    .prom-description = Un finalizer, ou un nœud non prêt, empêche le pod { $namespace }/{ $pod } de partir.
rule-node-flapping =
    .title = Nœud Kubernetes instable
    .summary = Le nœud { $node } est instable : sa condition Ready a changé { $changes } fois en 15 minutes
    .prom-summary = Le nœud { $node } est instable : sa condition Ready a changé { $value } fois en 15 minutes
    .prom-description = La condition Ready du nœud { $node } ne cesse de changer.
rule-job-failed =
    .title = Job Kubernetes en échec
    .summary = { $of ->
        [none] Le Job { $namespace }/{ $job } a échoué
       *[other] Le Job { $namespace }/{ $job } (du CronJob { $owner }) a échoué
    }
    .prom-summary = Le Job { $namespace }/{ $job } a échoué
    .prom-description = Le Job { $namespace }/{ $job } (CronJob { $owner }) a sa condition Failed à True.
rule-cronjob-missed =
    .title = CronJob Kubernetes sans ses exécutions
    .summary = Le CronJob { $namespace }/{ $cronjob } a manqué ses exécutions
    .prom-summary = Le CronJob { $namespace }/{ $cronjob } a manqué ses exécutions
    .prom-description = Le CronJob { $namespace }/{ $cronjob } s’est exécuté pour la dernière fois il y a plus de deux fois la période de son planning.

rule-control-plane-component-down =
    .title = Composant du plan de contrôle Kubernetes arrêté
    .summary = { $component } n’a pas renouvelé son bail de leader depuis { $seconds } s
    .description = { $component ->
        [kube-scheduler] Aucun nouveau pod n’est ordonnancé : chaque pod créé désormais reste Pending.
       *[other] Plus rien de ce que font les contrôleurs n’a lieu : Deployments, ReplicaSets et StatefulSets ne créent plus de pods, Jobs et CronJobs ne s’exécutent plus, les pods d’un nœud perdu ne sont pas évincés, les endpoints des Services ne sont plus mis à jour, rien n’est ramassé.
    } Son dernier leader était { $holder }.
    .prom-summary = { $component } n’a pas renouvelé son bail de leader depuis { $value }
    .prom-description = Le bail de leader de { $component } dans kube-system n’a pas été renouvelé depuis plus d’une minute : le composant s’est arrêté ou n’atteint plus l’API server.
rule-hpa-maxed-out =
    .title = HPA Kubernetes à son maximum
    .summary = Le HPA { $namespace }/{ $hpa } tourne à son maximum de { $max } répliques depuis 15 minutes
    .prom-summary = Le HPA { $namespace }/{ $hpa } tourne à son maximum de { $value } répliques
    .prom-description = Le HPA { $namespace }/{ $hpa } tourne à son maxReplicas depuis 15 minutes : il monterait plus haut s’il le pouvait.
rule-hpa-replicas-mismatch =
    .title = HPA Kubernetes en deçà des répliques voulues
    .summary = Le HPA { $namespace }/{ $hpa } veut { $desired } répliques et en a { $current } depuis 15 minutes
    .prom-summary = Le HPA { $namespace }/{ $hpa } n’atteint pas les répliques voulues
    .prom-description = Le HPA { $namespace }/{ $hpa } veut depuis 15 minutes un autre nombre de répliques que le sien, dans ses bornes, sans que ce nombre change.
rule-pdb-not-enough-healthy =
    .title = Budget de perturbation Kubernetes à court de pods sains
    .summary = Le PodDisruptionBudget { $namespace }/{ $pdb } a { $current } pods sains sur les { $desired } qu’il exige
    .description = Il couvre { $expected } pods et permet { $allowed } perturbations : un drain de nœud qui doit en évincer un attend qu’assez soient sains.
    .prom-summary = Le PodDisruptionBudget { $namespace }/{ $pdb } manque de pods sains
    .prom-description = Le PodDisruptionBudget { $namespace }/{ $pdb } a moins de pods sains qu’il n’en exige depuis 15 minutes : un drain de nœud y restera bloqué.
rule-quota-almost-full =
    .title = Quota Kubernetes presque plein
    .summary = Le quota { $namespace }/{ $resourcequota } est utilisé à { $percent } % pour { $resource }
    .prom-summary = Le quota { $namespace }/{ $resourcequota } est utilisé à { $value } pour { $resource }
    .prom-description = Le ResourceQuota { $namespace }/{ $resourcequota } utilise 90 % ou plus de son { $resource } depuis 15 minutes.
rule-quota-fully-used =
    .title = Quota Kubernetes entièrement utilisé
    .summary = Le quota { $namespace }/{ $resourcequota } est entièrement utilisé pour { $resource } : les nouveaux objets qui en demandent plus sont refusés
    .prom-summary = Le quota { $namespace }/{ $resourcequota } est entièrement utilisé pour { $resource }
    .prom-description = Le ResourceQuota { $namespace }/{ $resourcequota } utilise tout son { $resource } depuis 15 minutes : l’API server refuse ce qui en demanderait plus.
rule-quota-exceeded =
    .title = Quota Kubernetes dépassé
    .summary = Le quota { $namespace }/{ $resourcequota } dépasse sa limite pour { $resource } ({ $percent } %)
    .prom-summary = Le quota { $namespace }/{ $resourcequota } dépasse sa limite pour { $resource } ({ $value })
    .prom-description = Le ResourceQuota { $namespace }/{ $resourcequota } dépasse sa limite de { $resource } depuis 15 minutes (la limite a été abaissée sous l’existant).
rule-webhook-unavailable =
    .title = Webhook d’admission Kubernetes injoignable
    .summary = Le webhook { $kind ->
        [mutating] de mutation
       *[other] de validation
    } { $configuration }/{ $webhook } est injoignable ({ $policy ->
        [Ignore] ses requêtes passent sans contrôle
       *[other] ses requêtes sont refusées
    })
    .prom-summary = Le webhook d’admission { $configuration }/{ $webhook } est injoignable (failurePolicy { $failure_policy })
    .prom-description = Le webhook { $kind } { $webhook } de { $configuration } n’a plus d’endpoint prêt sur le port de son Service depuis 5 minutes : l’API server refuse chaque requête qu’il intercepte (failurePolicy Fail), ou la laisse passer sans contrôle (Ignore).

rule-pv-errors =
    .title = Volume persistant Kubernetes en erreur
    .summary = Le PersistentVolume { $pv } est { $phase }
    .prom-summary = Le PersistentVolume { $pv } est { $phase }
    .prom-description = Le PersistentVolume { $pv } est en phase { $phase } depuis 5 minutes.

rule-cpu-overcommit =
    .title = Demandes de CPU Kubernetes au-delà de ce que tient le cluster
    .summary = Les pods demandent { $requests } cœurs : { $nodes ->
        [one] plus que les { $allocatable } de son unique nœud
       *[other] plus que les { $room } que ses nœuds tiennent sans le plus gros ({ $allocatable } en tout)
    }
    .prom-summary = Demandes de CPU au-delà de ce que tient le cluster sans son plus gros nœud
    .prom-description = Les pods demandent plus de CPU que les nœuds n’en donnent sans le plus gros d’entre eux : si un nœud est perdu, des pods ne pourront plus être ordonnancés.
rule-memory-overcommit =
    .title = Demandes de mémoire Kubernetes au-delà de ce que tient le cluster
    .summary = Les pods demandent { $requests } de mémoire : { $nodes ->
        [one] plus que les { $allocatable } de son unique nœud
       *[other] plus que les { $room } que ses nœuds tiennent sans le plus gros ({ $allocatable } en tout)
    }
    .prom-summary = Demandes de mémoire au-delà de ce que tient le cluster sans son plus gros nœud
    .prom-description = Les pods demandent plus de mémoire que les nœuds n’en donnent sans le plus gros d’entre eux : si un nœud est perdu, des pods ne pourront plus être ordonnancés.
rule-cpu-quota-overcommit =
    .title = Quotas de CPU Kubernetes au-delà de ce qu’a le cluster
    .summary = Les quotas des namespaces promettent { $hard } de CPU, { $percent } % des { $allocatable } que donnent les nœuds
    .prom-summary = Les quotas de CPU promettent { $value } de ce que donnent les nœuds
    .prom-description = Les limites de CPU des quotas des namespaces dépassent ensemble 1,5 fois le CPU que donnent les nœuds Ready et ordonnançables, depuis 5 minutes : les quotas ne peuvent pas tous être utilisés.
rule-memory-quota-overcommit =
    .title = Quotas de mémoire Kubernetes au-delà de ce qu’a le cluster
    .summary = Les quotas des namespaces promettent { $hard } de mémoire, { $percent } % des { $allocatable } que donnent les nœuds
    .prom-summary = Les quotas de mémoire promettent { $value } de ce que donnent les nœuds
    .prom-description = Les limites de mémoire des quotas des namespaces dépassent ensemble 1,5 fois la mémoire que donnent les nœuds Ready et ordonnançables, depuis 5 minutes : les quotas ne peuvent pas tous être utilisés.
rule-node-too-many-pods =
    .title = Nœud Kubernetes plein de pods
    .summary = Le nœud { $node } fait tourner { $pods } pods sur les { $capacity } permis
    .prom-summary = Le nœud { $node } fait tourner { $value } des pods permis
    .prom-description = Le nœud { $node } fait tourner 95 % ou plus de ses pods allouables depuis 15 minutes : de nouveaux pods n’y tiendront pas.
rule-daemonset-misscheduled =
    .title = DaemonSet Kubernetes sur des nœuds où il ne devrait pas être
    .summary = Le DaemonSet { $namespace }/{ $workload } a { $count } pods sur des nœuds où il ne devrait pas tourner
    .description = Son sélecteur de nœuds, son affinité ou les taints des nœuds ont changé sous des pods déjà là : ils tournent encore où le DaemonSet n’a plus sa place.
    .prom-summary = Le DaemonSet { $namespace }/{ $workload } a des pods sur des nœuds où il ne devrait pas tourner
    .prom-description = Le DaemonSet { $namespace }/{ $workload } a des pods sur des nœuds où il ne devrait pas tourner depuis 15 minutes.
rule-generation-mismatch =
    .title = Changement Kubernetes que le contrôleur n’a pas vu
    .summary = Le contrôleur de { $kind } { $namespace }/{ $workload } n’a pas vu son dernier changement
    .description = Son metadata.generation est en avance sur status.observedGeneration : le changement est accepté mais rien n’y donne encore suite.{ $stopped ->
        [yes] {" "}kube-controller-manager s’est arrêté : rien n’y donnera suite avant qu’il tourne de nouveau.
       *[no] {""}
    }
    .prom-summary = Le contrôleur de { $kind } { $namespace }/{ $workload } n’a pas vu son dernier changement
    .prom-description = { $kind } { $namespace }/{ $workload } a une génération que son contrôleur n’a pas observée depuis 15 minutes : le changement n’a pas de suite.
rule-job-not-completed =
    .title = Job Kubernetes trop long
    .summary = Le Job { $namespace }/{ $job } tourne depuis { $hours } heures sans se terminer
    .prom-summary = Le Job { $namespace }/{ $job } tourne depuis { $value } sans se terminer
    .prom-description = Le Job { $namespace }/{ $job } a des pods actifs depuis plus de 12 heures sans se terminer.
rule-container-waiting =
    .title = Conteneur Kubernetes en attente
    .summary = Un conteneur du pod { $namespace }/{ $pod } attend depuis une heure : { $reason }
    .prom-summary = Un conteneur du pod { $namespace }/{ $pod } attend depuis une heure
    .prom-description = Un conteneur du pod { $namespace }/{ $pod }, qui n’est pas Pending, attend depuis une heure (une image qui ne se tire pas, une erreur de configuration après un redémarrage).

watchdog =
    .summary = DumbMonit est en vie
    .description = Cette alerte se déclenche tant que DumbMonit tourne : un dead man’s switch qui cesse de l’entendre sait que la surveillance s’est arrêtée.

pod-description = { $has_why ->
    [yes] { $why }; {""}
   *[no] {""}
}redémarrages : { $restarts }
quota-overcommit-description = les limites de tous les quotas additionnées (pour chaque quota, la plus petite de la ressource et de ses requests), face aux allouables des nœuds Ready et ordonnançables
quota-description = { $used } utilisés sur { $hard }
overcommit-description = { $allocatable } allouables sur { $nodes } nœuds Ready et ordonnançables, le plus gros { $largest }
