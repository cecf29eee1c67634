# La phrase et les compteurs (pages, `check`, notifications), et le texte de `check`, `top` et
# `replay`.

count-nodes-not-ready = { $count } { $count ->
    [one] nœud non prêt
   *[other] nœuds non prêts
}
count-pods-crashlooping = { $count } { $count ->
    [one] pod
   *[other] pods
} en boucle de crash
count-nodes-under-pressure = { $count } { $count ->
    [one] nœud
   *[other] nœuds
} sous pression
count-pods-blocked = { $count } { $count ->
    [one] pod bloqué
   *[other] pods bloqués
}
count-pods-pending = { $count } { $count ->
    [one] pod
   *[other] pods
} en attente
count-pods-failed = { $count } { $count ->
    [one] pod
   *[other] pods
} en échec
count-pods-not-ready = { $count } { $count ->
    [one] pod non prêt
   *[other] pods non prêts
}
count-workloads-missing-replicas = { $count } { $count ->
    [one] workload
   *[other] workloads
} avec des répliques manquantes
count-claims-stuck = { $count } { $count ->
    [one] demande de volume bloquée
   *[other] demandes de volume bloquées
}
count-pods-stuck-terminating = { $count } { $count ->
    [one] pod bloqué
   *[other] pods bloqués
} en arrêt
count-rollouts-stuck = { $count } { $count ->
    [one] déploiement bloqué
   *[other] déploiements bloqués
}
count-control-plane-down = { $count } { $count ->
    [one] composant du plan de contrôle arrêté
   *[other] composants du plan de contrôle arrêtés
}
count-webhooks-refusing = { $count } { $count ->
    [one] webhook d’admission injoignable
   *[other] webhooks d’admission injoignables
} (refusant les changements)
count-webhooks-skipped = { $count } { $count ->
    [one] webhook d’admission injoignable
   *[other] webhooks d’admission injoignables
} (laissant passer les changements)
count-pdbs-short = { $count } { $count ->
    [one] budget de perturbation à court
   *[other] budgets de perturbation à court
} de pods sains
count-quotas-full = { $count } { $count ->
    [one] quota plein
   *[other] quotas pleins
}
count-volumes-in-error = { $count } { $count ->
    [one] volume en erreur
   *[other] volumes en erreur
}
count-nodes-full = { $count } { $count ->
    [one] nœud plein
   *[other] nœuds pleins
} de pods
count-daemonsets-misscheduled = { $count } { $count ->
    [one] DaemonSet sur des nœuds où il ne devrait pas être
   *[other] DaemonSets sur des nœuds où ils ne devraient pas être
}
count-jobs-too-long = { $count } { $count ->
    [one] job
   *[other] jobs
} en cours depuis plus de 12 heures
count-quotas-overcommitted = des quotas promettant plus de 1,5 fois { $count ->
    [one] le CPU ou la mémoire
   *[other] le CPU et la mémoire
} du cluster
count-overcommitted = { $count ->
    [one] des demandes
   *[other] des demandes de CPU et de mémoire
} au-delà de ce que tient le cluster sans son plus gros nœud
count-jobs-failed = { $count } { $count ->
    [one] job
   *[other] jobs
} en échec
count-cronjobs-missed = { $count } { $count ->
    [one] cron job a manqué ses exécutions
   *[other] cron jobs ont manqué leurs exécutions
}
count-kubelets-skew = { $count } { $count ->
    [one] kubelet
   *[other] kubelets
} hors de l’écart de versions
certificate-expires = certificat { $certificate ->
    [serving] de l’API server
   *[client] client
} { $when ->
    [past] expiré depuis { $days } { $days ->
        [one] jour
       *[other] jours
    }
   *[other] expire { in-days }
}
healthy-with-nodes = En bonne santé : { $nodes } { $nodes ->
    [one] nœud prêt
   *[other] nœuds prêts
}, { $pods } { $pods ->
    [one] pod
   *[other] pods
}
healthy = En bonne santé : { $pods } { $pods ->
    [one] pod
   *[other] pods
}
watched-in = { $said } (surveillé dans { $count } { $count ->
    [one] namespace
   *[other] namespaces
})
cannot-be-read-with = Illisible : { $error }
waiting = En attente du premier cycle
counters-nodes = { $nodes } { $nodes ->
    [one] nœud
   *[other] nœuds
} ({ $ready } { $ready ->
    [one] prêt
   *[other] prêts
}){", "}
counters = { $pods } { $pods ->
    [one] pod
   *[other] pods
} ({ $running } en cours, { $pending } en attente, { $failed } en échec), { $workloads } { $workloads ->
    [one] workload
   *[other] workloads
}, { $claims } { $claims ->
    [one] demande de volume
   *[other] demandes de volume
}, { $events } { $events ->
    [one] événement d’avertissement
   *[other] événements d’avertissement
} dans la dernière heure

## Le rapport texte de `check`
text-version-unknown = version inconnue
text-cluster = Cluster { $address } ({ $version }) : { $counters }
text-col-name = NOM
text-col-ready = READY
text-col-pressure = PRESSION
text-col-scheduling = EN CORDON
text-col-kubelet = KUBELET
text-col-why = POURQUOI
text-col-pod = POD
text-col-state = ÉTAT
text-col-restarts = REDÉMARRAGES
text-col-workload = WORKLOAD
text-col-unavailable = INDISPONIBLES
text-col-updated = À JOUR
text-col-claim = DEMANDE
text-col-phase = PHASE

## `top` : les colonnes de kubectl top, et ce que DumbMonit ajoute
top-requests = Ce que les pods demandent et limitent, par nœud (lu dans les pods ; sans Metrics API) :
top-overcommitted = limites surengagées

## Les problèmes d’un pod
pod-crash-looping = en boucle de crash
pod-blocked = bloqué ({ $reason })
pod-pending = en attente
pod-failed = en échec
pod-stuck-terminating = bloqué en arrêt
pod-not-ready = non prêt

## Ce que les lectures facultatives ont trouvé
metrics-api-available = Metrics API disponible
metrics-api-not-installed = Metrics API indisponible : elle n’est pas installée (pas d’APIService { $apiservice } ; metrics-server n’est pas déployé)
metrics-api-not-granted = Metrics API non lue : le compte de service ne peut pas lister { $resource } (`dumbmonit rbac --optional` l’accorde)
metrics-api-not-read = Metrics API non lue
access-none = aucun
access-watched-in = Surveillé dans { $count } { $count ->
    [one] namespace
   *[other] namespaces
} (accès par namespace) : { $read }
access-nodes-hidden = Les nœuds ne sont pas visibles avec ce jeton (accès par namespace) : la santé des nœuds n’est pas surveillée
access-node-events-hidden = Les événements des nœuds ne sont pas visibles avec ce jeton (accès par namespace) : ils sont enregistrés dans le namespace default
access-not-visible = Non visible avec ce jeton (accès par namespace) : { $kinds }
text-apiservice = L’APIService { $name } ({ $service }) n’est pas Available : { $why }
text-hpa = Le HPA { $namespace }/{ $name } ne peut pas mettre à l’échelle : { $reason } : { $message }
text-certificate = { certificate-what } expire le { $date } ({ in-days })
text-control-plane = { $component } n’a pas renouvelé son bail de leader depuis { $seconds } s : { $what }
text-webhook = Webhook { $kind ->
    [mutating] de mutation
   *[other] de validation
} { $configuration }/{ $webhook } : { webhook-unavailable-why }
webhook-unavailable-why = { $reach ->
    [no-service] son Service { $service } n’existe pas
    [no-port] son Service { $service } n’a pas ce port
   *[other] son Service { $service } n’a aucun endpoint prêt sur ce port
} : { $policy ->
    [Ignore] l’API server laisse passer sans contrôle
   *[other] l’API server refuse
} { $operations } de { $resources } { $scoped ->
    [yes] dans les namespaces qui correspondent à { $selector }
   *[other] dans tous les namespaces
}.
text-pdb = Le PodDisruptionBudget { $namespace }/{ $name } a { $current } pods sains sur les { $desired } qu’il exige : un drain de nœud y resterait bloqué
text-quota = Quota { $namespace }/{ $name } : { $resource } { $level ->
    [exceeded] au-delà de sa limite
    [full] entièrement utilisé, ce qui en demande plus est refusé
   *[other] presque plein
} ({ $used } utilisés sur { $hard })
text-pv = Le PersistentVolume { $name } est { $phase }
text-not-granted = Non accordé à ce compte de service : { $resources } (`dumbmonit rbac --optional` les ajoute)
text-node-pods = Le nœud { $node } fait tourner { $pods } des { $capacity } pods permis
text-misscheduled = Le DaemonSet { $namespace }/{ $name } a { $count } pods sur des nœuds où il ne devrait pas tourner
text-job-long = Le Job { $namespace }/{ $name } tourne depuis { $hours } heures sans se terminer
text-generation = { $kind } { $namespace }/{ $name } : son contrôleur n’a pas vu son dernier changement (génération en avance de { $lag })
text-job = { $of ->
    [none] Le Job { $namespace }/{ $name } a échoué : { $why }
   *[other] Le Job { $namespace }/{ $name } (CronJob { $owner }) a échoué : { $why }
}
text-cronjob = Le CronJob { $namespace }/{ $name } a manqué ses exécutions : { $why }

## Les raisons d’un pourquoi qui sont les nôtres (les mots du cluster sont dits tels quels).
exit-meaning = { $kind ->
    [ok] s’est terminé avec succès (et a été redémarré : vérifiez la politique de redémarrage ou la commande)
    [usage] mauvais usage d’une commande shell ou arguments invalides
    [noexec] la commande ne peut pas être exécutée (permissions, ou pas un exécutable)
    [notfound] commande introuvable (vérifiez l’entrypoint et la commande de l’image)
    [oom] SIGKILL : mémoire épuisée, le conteneur a dépassé sa limite de mémoire
    [kill] SIGKILL : tué, par l’OOM killer ou pour ne pas s’être arrêté dans son délai de grâce
    [term] SIGTERM : prié de s’arrêter, par exemple après l’échec de sa sonde liveness
    [segv] SIGSEGV : erreur de segmentation
    [abrt] SIGABRT : abandon
    [int] SIGINT : interrompu
    [range] code de sortie hors limites, ou erreur fatale avant le démarrage de l’application
    [signal] tué par le signal { $signal }
   *[other] erreur de l’application
}
why-node-no-ready = le nœud n’a aucune condition Ready
why-condition-true = { $condition } est True
why-tainted = marqué { $taint }{ $lost ->
    [yes]  : le contrôleur de nœuds a perdu le nœud
   *[no] {""}
}
why-kubelet-skew = le kubelet { $kubelet } sort de l’écart de versions supporté par l’API server { $server } (au plus 3 versions mineures plus ancien, jamais plus récent)
why-pod-is = le pod { $pod } est { $problems }
why-used-by = utilisé par le pod { $pod }
why-claim-first-consumer = attend son premier consommateur
why-claim-provisioner = attend le provisionneur externe { $provisioner }
why-claim-any-provisioner = attend son provisionneur externe
why-last-exit = { $container } : dernier code de sortie { $code }{ $reason } : { $meaning }
why-crashloop-no-exit = { $container } : en boucle de crash, aucune fin enregistrée
why-exit = { $container } : code de sortie { $code }{ $reason } : { $meaning }{ $has_message ->
    [yes]  : { $message }
   *[no] {""}
}
why-containers-not-ready = conteneurs non prêts : { $containers }
why-finalizers = attend ses finalizers : { $finalizers }
why-node-down = son nœud { $node } n’est pas prêt : le kubelet ne peut pas confirmer l’arrêt des conteneurs
why-no-progress = sa mise à jour n’a pas progressé depuis { $minutes } min : { $updated } répliques sur { $desired } à jour
why-past-grace = au-delà de son délai de grâce : le kubelet n’a pas confirmé l’arrêt de ses conteneurs
why-cronjob-missed = { $scheduled ->
    [never] jamais planifié depuis sa création il y a { $ago }
   *[last] planifié pour la dernière fois il y a { $ago }
}, alors que { $schedule } le lance toutes les { $every } : vérifiez le kube-controller-manager et les événements du CronJob
duration-words = { $unit ->
    [days] { $count } jours
    [h] { $count } h
    [min] { $count } min
   *[s] { $count } s
}

## Messages aux messageries et aux astreintes (Slack, PagerDuty) : ce qui a changé, en un mot ou deux.
notify-firing = En alerte
notify-resolved = Résolue après { $duration }
notify-reminder = Toujours en alerte, depuis { $duration }
notify-escalated = Passée en { $severity }
notify-acknowledged = Prise en charge par { $who }
notify-more = { $summary }, et { $count } { $count ->
    [one] autre
   *[other] autres
}
notify-runbook = Procédure
notify-pages = { $cluster } sur DumbMonit
notify-test-summary = Une notification d’essai de DumbMonit, envoyée par { $who }
notify-test-description = Si vous lisez ceci, le notificateur { $notifier } vous atteint.
